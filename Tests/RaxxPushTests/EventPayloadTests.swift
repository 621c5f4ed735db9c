import Foundation
import RaxxAPI
import RaxxAPNs
import RaxxPush
import Testing

/// Alerts rendered into aps payloads.
@Suite struct EventPayloadTests {
    static let at = Date(timeIntervalSince1970: 1_750_000_000)

    static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func aFillHasItsTitleBodyThreadAndSeq() throws {
        let event = Components.Schemas.Event(
            seq: 42, _type: .fillConfirmed, createdAt: Self.at, title: "Filled: buy 10 AAPL at 190.25",
            orderId: "ord-1", symbol: "AAPL", side: .buy, qty: 10, price: "190.25")
        let payload = try Self.object(EventPayload.render(event))
        let aps = try #require(payload["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Order filled")
        #expect(alert["body"] as? String == "Bought 10 AAPL at 190.25")
        #expect(aps["thread-id"] as? String == "raxx.fill_confirmed")
        #expect(payload["seq"] as? Int == 42 && payload["type"] as? String == "fill_confirmed")
        // Only what the device needs: nothing about the order or the account beyond the alert.
        #expect(Set(payload.keys) == ["aps", "seq", "type"])
    }

    @Test func eachAlertTypeHasItsOwnTitleAndThread() throws {
        let events: [(Components.Schemas.Event, String, String)] = [
            (
                .init(
                    seq: 1, _type: .orderRejected, createdAt: Self.at, title: "Order rejected: sell 5 MSFT", symbol: "MSFT", side: .sell, qty: 5,
                    reason: "insufficient_position"), "Order rejected", "Sell 5 MSFT rejected: insufficient_position"
            ),
            (
                .init(seq: 2, _type: .sessionExpiring, createdAt: Self.at, title: "Session expiring", expiresAt: Self.at.addingTimeInterval(900)),
                "Session expiring", "Your session ends at 2025-06-15T15:21:40Z. Sign in again to keep trading."
            ),
            (
                .init(seq: 3, _type: .securityAlert, createdAt: Self.at, title: "New passkey", body: "A new passkey was registered."),
                "Security alert", "A new passkey was registered."
            ),
        ]
        for (event, title, body) in events {
            let payload = try Self.object(EventPayload.render(event))
            let aps = try #require(payload["aps"] as? [String: Any])
            let alert = try #require(aps["alert"] as? [String: Any])
            #expect(alert["title"] as? String == title)
            #expect(alert["body"] as? String == body)
            #expect(aps["thread-id"] as? String == "raxx." + event._type.rawValue)
        }
    }

    @Test func aLongBodyIsShortenedToFitApnsLimit() throws {
        let event = Components.Schemas.Event(
            seq: 7, _type: .securityAlert, createdAt: Self.at, title: "Security",
            body: String(repeating: "é\"", count: 3000))
        let bytes = EventPayload.render(event)
        #expect(bytes.count <= APNs.maxPayloadBytes && bytes.count > APNs.maxPayloadBytes - 64)
        let alert = try #require((try Self.object(bytes)["aps"] as? [String: Any])?["alert"] as? [String: Any])
        #expect((alert["body"] as? String)?.hasSuffix("…") == true)
    }
}

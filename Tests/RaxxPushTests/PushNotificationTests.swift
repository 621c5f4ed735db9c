import Crypto
import Foundation
import RaxxAPNs
import RaxxPush
import Testing

/// Requests as Apple's rules have them, and what is refused before anything is sent.
@Suite struct PushNotificationTests {
    static let token = String(repeating: "0a1b2c3d", count: 8)
    static let providerToken = "h.c.s"

    static func notification(_ change: (inout PushNotification) -> Void = { _ in }) -> PushNotification {
        var n = PushNotification(deviceToken: token, topic: "app.raxx.ios", payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        change(&n)
        return n
    }

    @Test func buildsThePathAndEveryHeaderApplesRulesAskFor() throws {
        let n = Self.notification {
            $0.pushType = .background
            $0.priority = .conserve
            $0.expiration = 1_800_000_000
            $0.collapseID = "fills"
        }
        try n.check()
        let request = n.request(baseURL: "https://127.0.0.1:4443/", providerToken: Self.providerToken, apnsID: "6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11")
        #expect(request.url == "https://127.0.0.1:4443/3/device/\(Self.token)")
        #expect(request.headers == [
            "authorization: bearer h.c.s",
            "apns-topic: app.raxx.ios",
            "apns-push-type: background",
            "apns-priority: 5",
            "apns-expiration: 1800000000",
            "apns-collapse-id: fills",
            "apns-id: 6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11",
        ])
        #expect(request.body == n.payload)
    }

    @Test func leavesOutTheOptionalHeadersWhenNotGiven() {
        let request = Self.notification().request(baseURL: APNs.productionURL, providerToken: Self.providerToken, apnsID: "X")
        #expect(request.url == "https://api.push.apple.com/3/device/\(Self.token)")
        #expect(!request.headers.contains { $0.hasPrefix("apns-expiration") || $0.hasPrefix("apns-collapse-id") })
        #expect(request.headers.contains("apns-priority: 10") && request.headers.contains("apns-push-type: alert"))
    }

    @Test func aPayloadOfExactly4096BytesIsTaken() throws {
        let filler = String(repeating: "x", count: 4096 - #"{"a":""}"#.utf8.count)
        try Self.notification { $0.payload = Array(#"{"a":"\#(filler)"}"#.utf8) }.check()
    }

    @Test func refusesLocallyNamingTheField() {
        let cases: [(String, APNsReason?, (inout PushNotification) -> Void)] = [
            ("payload", .payloadTooLarge, { $0.payload = Array(("{\"a\":\"" + String(repeating: "x", count: 4091) + "\"}").utf8) }),
            ("payload", .payloadEmpty, { $0.payload = [] }),
            ("payload", nil, { $0.payload = Array("[1,2]".utf8) }),
            ("collapse_id", .badCollapseId, { $0.collapseID = String(repeating: "c", count: 65) }),
            ("device_token", .badDeviceToken, { $0.deviceToken = "abc" }),
            ("device_token", .badDeviceToken, { $0.deviceToken = String(repeating: "zz", count: 32) }),
            ("apns_id", .badMessageId, { $0.apnsID = "not-a-uuid" }),
            ("topic", .badTopic, { $0.topic = "app raxx" }),
            ("expiration", .badExpirationDate, { $0.expiration = -1 }),
        ]
        for (field, reason, change) in cases {
            do {
                try Self.notification(change).check()
                Issue.record("\(field) was not refused")
            } catch {
                #expect(error.field == field)
                #expect(error.reason == reason)
            }
        }
    }

    @Test func showsOnlyTheTokensLastEightCharacters() {
        #expect(Self.notification().tokenSuffix == "0a1b2c3d")
    }
}

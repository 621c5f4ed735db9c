import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import Testing

/// `--since`: a time, a date (from its midnight in the local time zone) or a duration back.
@Suite struct SinceArgumentTests {
    let now = Date(timeIntervalSince1970: 1_795_255_200)  // 2026-11-21T10:00:00Z

    @Test func takesATimeADurationOrADate() throws {
        #expect(try SinceArgument.parse("2026-11-21T09:30:00Z", now: now) == now.addingTimeInterval(-1800))
        #expect(try SinceArgument.parse("2h", now: now) == now.addingTimeInterval(-7200))
        let utc = try #require(TimeZone(identifier: "UTC")), paris = try #require(TimeZone(identifier: "Europe/Paris"))
        #expect(try SinceArgument.parse("2026-11-21", now: now, timeZone: utc) == now.addingTimeInterval(-36_000))
        // Midnight in Paris is 23:00 the day before in UTC (winter time).
        #expect(try SinceArgument.parse("2026-11-21", now: now, timeZone: paris) == now.addingTimeInterval(-39_600))
        #expect(try SinceArgument.parse(nil, now: now) == nil)
    }

    @Test func refusesWhatIsNoneOfThem() {
        for text in ["2026-13-01", "2026-02-30", "21/11/2026", "yesterday", "2026-11-2"] {
            #expect(throws: RaxxError.self, "\(text)") { try SinceArgument.parse(text, now: now) }
        }
        do {
            _ = try SinceArgument.parse("soon", now: now)
        } catch {
            #expect(error.status == .usage && error.message.contains("a date (2026-11-21"))
        }
    }
}

/// Audit lines in a table say what each event is about: the order or the device.
@Suite struct AuditAboutTests {
    @Test func namesTheOrderOrTheDevice() {
        func event(_ details: [String: String]) -> Components.Schemas.AuditEvent {
            .init(
                seq: 1, at: Date(timeIntervalSince1970: 0), actor: "usr_1", action: "order.placed", subject: "acc_1",
                details: .init(additionalProperties: details))
        }
        #expect(AuditPages.about(event(["order_id": "ord_1", "side": "buy", "qty": "10", "symbol": "AAPL"])) == "order ord_1 (buy 10 AAPL)")
        #expect(AuditPages.about(event(["client_order_id": "c-1", "reason": "live_trading_refused"])) == "order c-1")
        #expect(AuditPages.about(event(["device_id": "dev_1", "token_suffix": "0000beef"])) == "device dev_1 (…0000beef)")
        #expect(AuditPages.about(event(["ticket": "SUP-1"])) == "ticket SUP-1")
        #expect(AuditPages.about(event([:])) == "-")
    }
}

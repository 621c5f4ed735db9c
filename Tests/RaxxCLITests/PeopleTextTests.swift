import Foundation
import RaxxCLI
import RaxxCore
import RaxxTestSupport
import Testing

/// Text tables for people: money grouped with two decimals, times local and compact.
@Suite struct PeopleTextTests {
    @Test(arguments: [
        ("1732173.726", "1,732,173.73"), ("0", "0.00"), ("5", "5.00"), ("-5.5", "-5.50"), ("999.995", "1,000.00"),
        ("999999.999", "1,000,000.00"), ("-0.001", "0.00"), ("-0.005", "-0.01"), ("1234", "1,234.00"), ("189.5000", "189.50"),
        ("+12.344", "12.34"), ("007.1", "7.10"), ("n/a", "n/a"), ("1.2.3", "1.2.3"), ("", ""), ("-", "-"), ("1e5", "1e5"),
    ])
    func money(text: String, shown: String) {
        #expect(PeopleText.money(text) == shown)
    }

    /// Prices at their instrument's tick: cents for stocks from $1 and for options, hundredths of
    /// a cent for a stock under $1; an average finer than the tick rounds to it.
    @Test(arguments: [
        ("AAPL", "189.5", "189.50"), ("AAPL", "1234.5678", "1,234.57"), ("PENY", "0.1234", "0.1234"), ("PENY", "0.5", "0.5000"),
        ("PENY", "1.0001", "1.00"), ("AAPL261218C00190000", "0.05", "0.05"), ("AAPL261218C00190000", "12.3456", "12.35"),
        ("not a symbol", "0.1234", "0.12"), ("AAPL", "n/a", "n/a"),
    ])
    func prices(symbol: String, text: String, shown: String) {
        #expect(PeopleText.price(text, of: symbol) == shown)
    }

    @Test func moneyWithOtherDecimals() {
        #expect(PeopleText.money("1234.5", decimals: 0) == "1,235")
        #expect(PeopleText.money("0.99995", decimals: 4) == "1.0000")
        #expect(PeopleText.money("-0.00004", decimals: 4) == "0.0000")
    }

    @Test func timesAreLocalCompactAndRelativeWhenRecent() throws {
        let now = try #require(ISO8601DateFormatter().date(from: "2026-11-27T19:30:00Z"))
        let paris = try #require(TimeZone(identifier: "Europe/Paris"))
        func shown(_ text: String, _ zone: TimeZone = paris) throws -> String {
            PeopleText.time(try #require(ISO8601DateFormatter().date(from: text)), now: now, timeZone: zone)
        }
        #expect(try shown("2026-11-27T19:29:30Z") == "just now")
        #expect(try shown("2026-11-27T19:18:00Z") == "12m ago")
        #expect(try shown("2026-11-27T19:42:00Z") == "in 12m")
        #expect(try shown("2026-11-27T08:05:00Z") == "09:05")  // Paris is an hour ahead in November
        #expect(try shown("2026-11-27T08:05:00Z", TimeZone(identifier: "UTC")!) == "08:05")
        #expect(try shown("2026-11-26T23:30:00Z") == "00:30")  // the same day in Paris
        #expect(try shown("2026-03-02T10:00:00Z") == "Mar 2 11:00")
        #expect(try shown("2025-12-31T23:30:00Z") == "Jan 1 00:30")  // already 2026 in Paris
        #expect(try shown("2025-06-01T10:00:00Z") == "2025-06-01")
    }

    @Test func tablesShowTimesInTheZoneTZNames() throws {
        let world = TestWorld()
        world.environment["TZ"] = "America/New_York"
        world.clock = TestClock(try #require(ISO8601DateFormatter().date(from: "2026-11-27T19:30:00Z")))
        let context = try world.context(tool: "t", requirement: .offlineCapable, format: .text)
        #expect(context.peopleTime(try #require(ISO8601DateFormatter().date(from: "2026-11-27T14:00:00Z"))) == "09:00")
    }
}

import RaxxCore
import Testing

@Suite struct RaxxDurationTests {
    @Test(
        arguments: [
            ("500ms", 500), ("90s", 90_000), ("15m", 900_000), ("12h", 43_200_000), ("7d", 604_800_000),
            ("1h30m", 5_400_000), ("45", 45_000), (" 2m ", 120_000), ("0s", 0),
        ] as [(String, Int64)])
    func parses(text: String, milliseconds: Int64) {
        #expect(RaxxDuration(parsing: text)?.milliseconds == milliseconds)
    }

    @Test(arguments: ["", "s", "10x", "-5s", "1.5h", "m10", "10 s", "5s10", "99999999999999999d"])
    func rejects(text: String) {
        #expect(RaxxDuration(parsing: text) == nil)
    }

    @Test func describesCompactly() {
        #expect(RaxxDuration(milliseconds: 250).description == "250ms")
        #expect(RaxxDuration.seconds(90).description == "1m30s")
        #expect(RaxxDuration.hours(12).description == "12h")
        #expect(RaxxDuration.seconds(0).description == "0s")
    }

    @Test func readsAgesLikeAPerson() {
        #expect(RaxxDuration.seconds(1).humanAge == "1 second")
        #expect(RaxxDuration.seconds(42).humanAge == "42 seconds")
        #expect(RaxxDuration.minutes(5).humanAge == "5 minutes")
        #expect(RaxxDuration.hours(3).humanAge == "3 hours")
        #expect(RaxxDuration.hours(49).humanAge == "2 days")
    }
}

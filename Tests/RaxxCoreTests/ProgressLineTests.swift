import Foundation
import RaxxCore
import Testing

@Suite struct ProgressLineTests {
    /// A clock the test moves by hand, and a terminal that keeps what was written.
    final class Rig: @unchecked Sendable {
        private let lock = NSLock()
        private var now: Duration = .zero
        private var written: [String] = []
        func advance(_ d: Duration) { lock.withLock { now += d } }
        var clock: @Sendable () -> Duration { { [self] in lock.withLock { now } } }
        var write: @Sendable (String) -> Void { { [self] text in lock.withLock { written.append(text) } } }
        var output: [String] { lock.withLock { written } }
    }

    @Test func formatsDoneOfTotalPercentageRateAndTimeLeft() {
        let text = ProgressLine.format(label: "refreshing", unit: "changes", done: 300_000, total: 1_510_000, elapsed: .seconds(20))
        // 15,000/s; 1,210,000 left at that rate is 80.67 s, shown rounded up.
        #expect(text == "refreshing: 300,000 of 1,510,000 changes  19%  15,000/s  1:21 left")
    }

    @Test func withoutTotalShowsCountAndRateOnly() {
        let text = ProgressLine.format(label: "refreshing", unit: "changes", done: 4_000, total: nil, elapsed: .seconds(2))
        #expect(text == "refreshing: 4,000 changes  2,000/s")
    }

    @Test func beforeAnyTimeHasPassedNoRateIsGuessed() {
        #expect(ProgressLine.format(label: "seeding", unit: "fills", done: 0, total: 10, elapsed: .zero) == "seeding: 0 of 10 fills  0%")
        #expect(ProgressLine.format(label: "seeding", unit: "fills", done: 5, total: 10, elapsed: .milliseconds(50)) == "seeding: 5 of 10 fills  50%")
    }

    @Test func doneBeyondTheTotalNeverShowsOverAHundredPercent() {
        // The total is an estimate (a rebuild may carry tombstones the count did not see).
        let text = ProgressLine.format(label: "refreshing", unit: "changes", done: 1_050, total: 1_000, elapsed: .seconds(1))
        #expect(text == "refreshing: 1,050 of 1,050 changes  100%  1,050/s")
    }

    @Test func timeLeftFormatsHoursMinutesSeconds() {
        #expect(ProgressLine.clock(seconds: 0.2) == "0:01")
        #expect(ProgressLine.clock(seconds: 88) == "1:28")
        #expect(ProgressLine.clock(seconds: 3725) == "1:02:05")
        #expect(ProgressLine.clock(seconds: .infinity) == "99:59:59")
        #expect(ProgressLine.grouped(0) == "0")
        #expect(ProgressLine.grouped(999) == "999")
        #expect(ProgressLine.grouped(1000) == "1,000")
        #expect(ProgressLine.grouped(-1234567) == "-1,234,567")
    }

    @Test func redrawsAreThrottledAndEachStartsByClearingTheLine() {
        let rig = Rig()
        let line = ProgressLine(label: "pushing", unit: "notifications", total: 100, clock: rig.clock, write: rig.write)
        line.update(done: 1)
        #expect(rig.output.isEmpty)  // work shorter than the interval shows nothing
        rig.advance(.milliseconds(300))
        line.update(done: 30)
        line.update(done: 31)  // too soon after the last draw
        rig.advance(.milliseconds(100))
        line.update(done: 40)  // still too soon
        rig.advance(.milliseconds(200))
        line.update(done: 50)
        #expect(rig.output.count == 2)
        #expect(rig.output.allSatisfy { $0.hasPrefix(ProgressLine.clearSequence) && !$0.contains("\n") })
        #expect(rig.output[0] == ProgressLine.clearSequence + "pushing: 30 of 100 notifications  30%  100/s  0:01 left")
        #expect(rig.output[1].hasPrefix(ProgressLine.clearSequence + "pushing: 50 of 100 notifications  50%"))
    }

    @Test func finishClearsWhatWasDrawnSoNothingIsGluedToIt() {
        let rig = Rig()
        let line = ProgressLine(label: "refreshing", unit: "changes", clock: rig.clock, write: rig.write)
        rig.advance(.seconds(1))
        line.update(done: 10, total: 20)
        line.finish()
        line.finish()  // once only
        line.update(done: 20)  // nothing after the end
        #expect(rig.output == [ProgressLine.clearSequence + "refreshing: 10 of 20 changes  50%  10/s  0:01 left", ProgressLine.clearSequence])
    }

    @Test func finishWithKeepEndsTheLastStateWithANewline() {
        let rig = Rig()
        let line = ProgressLine(label: "seeding", unit: "fills", total: 4, clock: rig.clock, write: rig.write)
        line.advance()
        line.advance(by: 3)
        rig.advance(.seconds(2))
        line.finish(keep: true)
        #expect(rig.output == [ProgressLine.clearSequence + "seeding: 4 of 4 fills  100%  2/s\n"])
    }

    @Test func shortWorkFinishedWithoutKeepWritesNothing() {
        let rig = Rig()
        let line = ProgressLine(label: "exporting", unit: "rows", clock: rig.clock, write: rig.write)
        line.update(done: 5)
        line.finish()
        #expect(rig.output.isEmpty)
    }

    @Test func aLastStepWithoutACountShowsItsNameAndTheTimeSpentOnIt() {
        let rig = Rig()
        // A long interval: the step's own ticker (real time) never comes due during the test.
        let line = ProgressLine(
            label: "refreshing", unit: "changes", total: 600, minimumInterval: .seconds(60),
            clock: rig.clock, write: rig.write)
        rig.advance(.seconds(60))
        line.update(done: 600)
        rig.advance(.seconds(60))
        line.step("building the cache's indexes")
        rig.advance(.seconds(65))
        line.update(done: 600)  // a count after the step began does not take the line back
        line.finish(keep: true)
        #expect(
            rig.output == [
                ProgressLine.clearSequence + "refreshing: 600 of 600 changes  100%  10/s",
                ProgressLine.clearSequence + "refreshing: building the cache's indexes… 0:00",
                ProgressLine.clearSequence + "refreshing: building the cache's indexes… 1:05",
                ProgressLine.clearSequence + "refreshing: building the cache's indexes… 1:05\n",
            ])
    }
}

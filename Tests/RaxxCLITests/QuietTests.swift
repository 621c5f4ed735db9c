import Foundation
import RaxxCLI
import RaxxCore
import RaxxTestSupport
import Testing

/// `--quiet` and empty tables: what a cron job prints is what needs a person.
@Suite struct QuietTests {
    @Test(arguments: [
        RaxxError.offline(.offlineHard), .offline(.offlineSoft), .rateLimited(retryAfter: 30),
        RaxxError(code: .refreshRunning, message: "Another refresh is running."),
    ])
    func transientFailuresAreSilentWithQuiet(error: RaxxError) throws {
        for format in [OutputFormat.text, .json] {
            let world = TestWorld()
            let io = try world.context(tool: "t", requirement: .offlineCapable, format: format).io
            #expect(Reporter(tool: "t", format: format, quiet: true).report(error, to: io) == error.status)
            #expect(world.stdout.contents.isEmpty && world.stderr.contents.isEmpty)
            #expect(Reporter(tool: "t", format: format).report(error, to: io) == error.status)
            #expect(!world.stderr.contents.isEmpty)
        }
    }

    @Test func whatNeedsAPersonStillPrintsWithQuiet() throws {
        for error in [RaxxError.signInRequired, RaxxError(code: .cacheDamaged, message: "The cache is damaged."), RaxxError.usage("Bad.")] {
            let world = TestWorld()
            let io = try world.context(tool: "t", requirement: .offlineCapable, format: .text).io
            #expect(Reporter(tool: "t", format: .text, quiet: true).report(error, to: io) == error.status)
            #expect(world.stderr.contents.hasPrefix("t: "))
        }
    }

    @Test func quietDropsNotesAndProgressButNotWarnings() throws {
        let world = TestWorld()
        world.stderrIsTTY = true
        world.clock = TestClock()
        let context = try world.context(tool: "t", requirement: .offlineCapable, format: .text, quiet: true)
        context.say("a note")
        context.progressLine("working", total: 10).update(done: 5)
        context.warn("warning: the cache is over its cap")
        #expect(world.stderr.contents == "warning: the cache is over its cap\n")
        let loudWorld = TestWorld()
        try loudWorld.context(tool: "t", requirement: .offlineCapable, format: .text).say("a note")
        #expect(loudWorld.stderr.contents == "a note\n")
    }

    struct Row: Encodable { var symbol: String }

    @Test func anEmptyTablePrintsNothingAndSaysSoOnATerminal() throws {
        for terminal in [false, true] {
            let world = TestWorld()
            world.stderrIsTTY = terminal
            try world.context(tool: "t", requirement: .offlineCapable, format: .text).emit([Row](), columns: [.init("Symbol")]) { [$0.symbol] }
            #expect(world.stdout.contents.isEmpty)
            #expect(world.stderr.contents == (terminal ? "Nothing to show.\n" : ""))
        }
        let world = TestWorld()
        try world.context(tool: "t", requirement: .offlineCapable, format: .json).emit([Row](), columns: [.init("Symbol")]) { [$0.symbol] }
        #expect(world.stdout.contents.isEmpty && world.stderr.contents.isEmpty)
        // A table with rows keeps its header.
        try world.context(tool: "t", requirement: .offlineCapable, format: .text).emit([Row(symbol: "AAPL")], columns: [.init("Symbol")]) { [$0.symbol] }
        #expect(world.stdout.contents == "SYMBOL\nAAPL\n")
    }
}

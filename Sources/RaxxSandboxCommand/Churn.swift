import ArgumentParser
import Foundation
import RaxxCore
import RaxxSandbox
import RaxxWire

extension RaxxSandboxTool {
    public struct Churn: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(
            abstract: "Change a seeded account's positions, as a trading day does.",
            discussion: """
                Moves some positions (quantity and average price) and closes others (deleting them, which \
                leaves tombstones in the change log), so that a delta sync has something to carry. \
                Prints a JSON summary on stdout.
                """
        )

        @Option(help: ArgumentHelp("The SQLite database file (the one serve --db uses).", valueName: "path"))
        var db: String

        @Option(help: ArgumentHelp("The account's email address.", valueName: "email"))
        var email: String

        @Option(help: ArgumentHelp("How many positions to change, deletions included.", valueName: "count"))
        var changes = 100

        @Option(help: ArgumentHelp("How many of the changed positions to close and delete.", valueName: "count"))
        var deletes = 0

        @Option(help: ArgumentHelp("Varies the choice between runs (same round, same changes).", valueName: "n"))
        var round: UInt64 = 0

        @Option(name: .customLong("market-seed"), help: ArgumentHelp("The simulated market's seed.", valueName: "seed"))
        var marketSeed: UInt64 = 42

        public init() {}

        public func validate() throws {
            guard changes >= 0, deletes >= 0, deletes <= changes else {
                throw ValidationError("--changes and --deletes must not be negative, and --deletes must not exceed --changes.")
            }
            guard db != ":memory:" else { throw ValidationError("Changing :memory: would be lost at once; name a file.") }
        }

        public func run() async throws {
            do {
                let seeder = Seeder(database: try SandboxDatabase(path: db), market: Market(seed: marketSeed))
                printLine(try JSONLines.line(try seeder.churn(email: email, changes: changes, deletes: deletes, round: round)))
            } catch let error as Seeder.SeedError {
                printError("raxx-sandbox: \(error)")
                throw ExitCode(ExitStatus.usage.rawValue)
            } catch {
                printError("raxx-sandbox: churn failed: \(error)")
                throw ExitCode(ExitStatus.failure.rawValue)
            }
        }
    }
}

import ArgumentParser
import Foundation
import RaxxCore
import RaxxDomain
import RaxxSandbox
import RaxxWire

extension RaxxSandboxTool {
    public struct Seed: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(
            abstract: "Load a large, realistic trading history into an account.",
            discussion: """
                Creates the account when missing (a paper account with 100,000 in cash and no passkey; \
                it may enroll one through registration), then adds positions across equities and listed \
                options with the orders and fills that built them, each fill moving cash and the position \
                as the paper engine would. Where the history would overdraw the account or leave it less \
                cash than it had, a deposit of just what avoids both is credited first (audited). Prints \
                a JSON summary on stdout.
                """
        )

        @Option(help: ArgumentHelp("The SQLite database file (the one serve --db uses).", valueName: "path"))
        var db: String

        @Option(help: ArgumentHelp("The account's email address.", valueName: "email"))
        var email: String

        @Option(help: ArgumentHelp("How many positions to create.", valueName: "count"))
        var positions = 100

        @Option(help: ArgumentHelp("How many fills to create, spread over the positions.", valueName: "count"))
        var fills = 1000

        @Option(name: .customLong("market-seed"), help: ArgumentHelp("The simulated market's seed.", valueName: "seed"))
        var marketSeed: UInt64 = 42

        @Flag(help: "Make the account a support staff member (audited), as staff grant does.")
        var staff = false

        public init() {}

        public mutating func validate() throws {
            do { email = try EmailAddress.normalized(email) } catch { throw ValidationError("--email \(error).") }
            guard positions >= 0, fills >= 0 else { throw ValidationError("--positions and --fills must not be negative.") }
            guard fills == 0 || positions > 0 else { throw ValidationError("Fills need at least one position.") }
            guard db != ":memory:" else { throw ValidationError("Seeding :memory: would be lost at once; name a file.") }
        }

        public func run() async throws {
            let started = Date()
            // On a terminal: rows written of the total, rate and time left; cleared before the summary.
            let progress = ProgressLine.standardError(label: "seeding", unit: "rows")
            defer { progress.finish() }
            do {
                let database = try SandboxDatabase(path: db)
                let seeder = Seeder(database: database, market: Market(seed: marketSeed))
                let summary = try seeder.seed(email: email, positions: positions, fills: fills) { done, total in
                    progress.update(done: done, total: total)
                }
                progress.finish()
                if staff { _ = try database.setStaff(email: email, staff: true, actor: "raxx-sandbox seed") }
                printLine(try JSONLines.line(summary))
                let seconds = Date().timeIntervalSince(started)
                printError(
                    String(
                        format: "raxx-sandbox: seeded %@ with %d positions, %d orders and %d fills in %.1f s",
                        email, summary.positions, summary.orders, summary.fills, seconds))
            } catch let error as Seeder.SeedError {
                printError("raxx-sandbox: \(error)")
                throw ExitCode(ExitStatus.usage.rawValue)
            } catch {
                printError("raxx-sandbox: seeding failed: \(error)")
                throw ExitCode(ExitStatus.failure.rawValue)
            }
        }
    }
}

import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxDomain
import RaxxStore
import RaxxWire

extension RaxxNotify {
    /// `raxx-notify list`: the account's alerts, newest last.
    public struct List: RaxxNotifyVerb {
        public static let connectivity = ConnectivityRequirement.networkOptional
        public static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the account's alerts, newest last.",
            discussion: """
                Fetches what is new from the server, keeps it, and prints the newest --limit alerts (after \
                --cursor, since --since, of the --type given). With --cached, or when the server cannot be \
                reached, it answers from the alerts already fetched and says on stderr when they were last \
                updated. Exits 3 when none were ever fetched. 
                """ + connectivity.helpLine + " With --cached: offline-capable."
        )

        @Option(
            help: ArgumentHelp(
                "Only alerts since this time: RFC 3339, a date (2026-11-21: from its midnight here), or a duration back from now such as 2h.", valueName: "time"
            ))
        var since: String?
        @Option(help: ArgumentHelp("Only alerts after this seq.", valueName: "n"))
        var cursor: Int64?
        @Option(help: ArgumentHelp("Only these types, comma-separated: \(AlertTypes.names).", valueName: "types"), completion: AlertTypes.completion)
        var type: AlertTypes?
        @Option(parsing: .unconditional, help: ArgumentHelp("At most this many alerts, the newest (default 100).", valueName: "n"))
        var limit = 100
        @Flag(help: "Answer from the alerts already fetched (offline) instead of asking the server.")
        var cached = false
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public var requirement: ConnectivityRequirement { cached ? .offlineCapable : Self.connectivity }

        public func validate() throws {
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 10000.") }
            if let cursor, cursor < 0 { throw ValidationError("--cursor must be 0 or more.") }
        }

        public func run(_ context: CommandContext) async throws {
            let since = try SinceArgument.parse(self.since, now: context.clock(), timeZone: context.configuration.timeZone)
            let store = try context.stores.alerts()
            var answeredOffline = cached
            if !cached {
                do {
                    try await AlertFeed(api: try context.signedInAPI(), store: store, clock: context.clock).catchUp()
                } catch  where AlertWatcher.isOffline(error) {
                    try? store.recordFailure(at: context.clock())
                    answeredOffline = true
                }
            }
            let state = try store.state()
            if answeredOffline {
                guard let updated = state.lastSuccessAt else {
                    throw RaxxError(code: .noCachedData, message: "No alerts fetched yet — run raxx-notify list while online")
                }
                if state.lastFetchFailed {
                    context.say("No connection — data last updated at \(context.peopleMoment(updated))")
                }
            }
            let alerts = try store.alerts(after: cursor, since: since, types: type?.types, limit: limit)
            try context.emit(alerts, columns: AlertOutput.columns) { AlertOutput.row($0, time: context.peopleTime) }
        }
    }
}

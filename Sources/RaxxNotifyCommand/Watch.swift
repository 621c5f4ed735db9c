import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxDomain
import RaxxStore

extension RaxxNotify {
    /// `raxx-notify watch`: follow the alerts as they come.
    public struct Watch: RaxxNotifyVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "watch",
            abstract: "Follow the account's alerts, one line each as it arrives.",
            discussion: """
                Long-polls the server and prints each alert the moment it arrives. The cursor is saved only \
                after an alert's line was written and flushed, so a restart never skips or repeats one. When \
                the connection is lost it says once "No connection — waiting" and tries again with capped, \
                jittered backoff; SIGINT and SIGTERM end it with exit 0. --once prints what is new since the \
                saved cursor and exits, printing nothing when there is nothing new (for cron, which mails \
                whatever a job prints). 
                """ + connectivity.helpLine
        )

        @Flag(help: "Print what is new since the saved cursor, then exit.")
        var once = false
        @Option(help: ArgumentHelp("Only these types, comma-separated: \(AlertTypes.names).", valueName: "types"), completion: AlertTypes.completion)
        var type: AlertTypes?
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let feed = AlertFeed(api: try context.signedInAPI(), store: try context.stores.alerts(), clock: context.clock)
            let watcher = AlertWatcher(feed: feed, types: type?.types, sleep: context.world.sleep, say: { context.say($0) })
            if once {
                try await watcher.once { try AlertOutput.line($0, in: context) }
                return
            }
            let following = Task { try await watcher.follow { try AlertOutput.line($0, in: context) } }
            let interrupts = context.world.onInterrupt { _ in following.cancel() }
            defer { withExtendedLifetime(interrupts) {} }
            try await following.value
        }
    }
}

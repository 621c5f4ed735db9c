import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore

extension RaxxAuth {
    /// `raxx-auth activity`: the account's own audit trail.
    public struct Activity: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "activity",
            abstract: "Show your account's audit trail, oldest first.",
            discussion: """
                Sign-ins, renewals refused, step-ups, device changes, order state changes, and staff \
                actions on your data-subject requests: JSON Lines (a table on a terminal), fetched page \
                by page; --cursor continues after an event's seq. 
                """ + connectivity.helpLine
        )

        @Option(help: ArgumentHelp("Start after this event (its seq).", valueName: "seq"))
        var cursor: Int64 = 0
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let api = try context.signedInAPI()
            try await AuditPages.print(in: context, from: cursor) { cursor in
                try await api.listAuditEvents(query: .init(cursor: cursor, limit: 500)).checked().ok.body.json
            }
        }
    }
}

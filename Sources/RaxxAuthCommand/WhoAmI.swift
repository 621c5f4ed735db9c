import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxWire

extension RaxxAuth {
    /// `raxx-auth whoami`: ask the server whose session this is.
    public struct WhoAmI: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "whoami",
            abstract: "Ask the server which account this device's session belongs to.",
            discussion: """
                Unlike status, this checks the session with the server, renewing an expired access token on \
                the way. Exits 4 when the session is over or was revoked. 
                """ + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var account: String
            var account_id: String
            var mode: String
            var staff: Bool
            var access_expires_at: Date
            var session_expires_at: Date
        }

        public func run(_ context: CommandContext) async throws {
            switch try await context.signedInAPI().getSession() {
            case .ok(let ok):
                let s = try ok.body.json
                let record = Record(
                    account: s.account.email, account_id: s.account.id, mode: s.account.mode.rawValue,
                    staff: s.account.staff ?? false, access_expires_at: s.expiresAt, session_expires_at: s.sessionExpiresAt)
                try context.emit([record], columns: [.init("Account"), .init("Mode"), .init("Session until")]) {
                    [$0.account, $0.mode, context.peopleTime($0.session_expires_at)]
                }
            case .default(_, let problem):
                throw try problem.raxxError
            }
        }
    }
}

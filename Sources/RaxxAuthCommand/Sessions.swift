import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxWire

extension RaxxAuth {
    /// `raxx-auth sessions`: where the account is signed in.
    public struct Sessions: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "sessions",
            abstract: "List where your account is signed in, oldest first, marking this device's session.",
            discussion: """
                Every live session of the account (neither signed out nor past its end), on any \
                device: JSON Lines (a table on a terminal): id, created_at, expires_at, this_device. \
                One you do not know is a sign-in by someone else: remove the passkey it came from \
                (raxx-auth passkeys) and check raxx-auth activity. 
                """ + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var id: String
            var created_at: Date
            var expires_at: Date
            var this_device: Bool

            enum CodingKeys: String, CodingKey {
                case id, created_at, expires_at, this_device
            }

            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(id, forKey: .id)
                try c.encode(RFC3339.string(from: created_at), forKey: .created_at)
                try c.encode(RFC3339.string(from: expires_at), forKey: .expires_at)
                try c.encode(this_device, forKey: .this_device)
            }
        }

        public func run(_ context: CommandContext) async throws {
            let sessions = try await context.signedInAPI().listSessions().checked().ok.body.json.sessions
            let records = sessions.map { Record(id: $0.id, created_at: $0.createdAt, expires_at: $0.expiresAt, this_device: $0.current) }
            try context.emit(records, columns: [.init("ID"), .init("Signed in"), .init("Ends"), .init("This device")]) {
                [$0.id, context.peopleMoment($0.created_at), context.peopleMoment($0.expires_at), $0.this_device ? "yes" : ""]
            }
        }
    }
}

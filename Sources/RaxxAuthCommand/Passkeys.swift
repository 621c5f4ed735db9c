import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxWire

extension RaxxAuth {
    /// `raxx-auth passkeys`: the account's passkeys, on every device.
    public struct Passkeys: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(
            commandName: "passkeys",
            abstract: "List the account's passkeys and remove one.",
            discussion: """
                Every passkey of the account, on every device: one is added by raxx-auth register (with \
                the code emailed to the account), removed by passkeys remove (confirmed with a passkey). \
                Each change is audited, raises a security alert and is emailed.
                """,
            subcommands: [List.self, Remove.self]
        )

        public init() {}
    }
}

extension RaxxAuth.Passkeys {
    /// `passkeys list`.
    public struct List: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the account's passkeys, oldest first, marking this device's.",
            discussion: "JSON Lines (a table on a terminal): id, created_at, last_used_at, this_device. " + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var id: String
            var created_at: String
            var last_used_at: String?
            var this_device: Bool
        }

        public func run(_ context: CommandContext) async throws {
            let mine = try context.keystore.load()[context.origin].credential?.credentialID
            let passkeys = try await context.signedInAPI().listPasskeys().checked().ok.body.json.passkeys
            let records = passkeys.map {
                Record(
                    id: $0.id, created_at: RFC3339.string(from: $0.createdAt), last_used_at: $0.lastUsedAt.map(RFC3339.string(from:)),
                    this_device: $0.id == mine)
            }
            try context.emit(records, columns: [.init("ID"), .init("Created"), .init("Last used"), .init("This device")]) {
                [$0.id, $0.created_at, $0.last_used_at ?? "never", $0.this_device ? "yes" : ""]
            }
        }
    }

    /// `passkeys remove ID`.
    public struct Remove: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove one of the account's passkeys (confirmed with this device's passkey and PIN).",
            discussion: """
                The removal is a step-up: this device's passkey signs for exactly that passkey's removal \
                (the PIN is asked on the terminal, or read from --pin-fd). The account's last passkey is \
                not removed: register another first. Removing this device's own passkey leaves the \
                session as it is; sign out with raxx-auth logout --forget-device. 
                """ + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The passkey's id (from passkeys list).", valueName: "id"))
        var id: String
        @OptionGroup var pin: PINOptions
        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var id: String
            var removed: Bool
        }

        public func run(_ context: CommandContext) async throws {
            let api = try context.signedInAPI()
            let grant = try await context.ceremonies().stepUp(for: PasskeyRemovalAction(passkeyID: id), pin: context.pinPrompt(pin.source)).grant
            switch try await api.removePasskey(path: .init(passkeyId: id), headers: .init(raxxStepUpGrant: grant)).checked() {
            case .noContent: break
            case .default(_, let problem): throw try problem.raxxError
            }
            try context.emit([Record(id: id, removed: true)], columns: [.init("ID"), .init("Removed")]) { [$0.id, "yes"] }
        }
    }
}

import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore
import RaxxWire

extension RaxxAuth {
    /// `raxx-auth logout`: end the session here, and on the server when it can be reached.
    public struct Logout: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkOptional
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "logout",
            abstract: "Sign out: revoke the session and wipe its tokens from this device.",
            discussion: """
                Signs out of the server RAXX_API_URL names (sessions of other servers stay). Online, the server \
                revokes the session, and only its confirmation is reported as revoked. Offline, or when the \
                server does not confirm, the tokens are wiped here all the same and the server's session lapses \
                by itself at its expiry, which is shown. --forget-device also destroys this device's passkey for \
                that server and everything the device keeps of the account there: its cache, order journal and \
                alerts. 
                """ + connectivity.helpLine
        )

        @Flag(name: .customLong("forget-device"), help: "Also destroy this device's passkey and the account's local data (sign-in then needs register).")
        var forgetDevice = false

        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var signed_out: Bool
            var revoked_on_server: Bool
            var server_session_lapses_at: Date?
            var forgot_device: Bool
            /// The account's cache, order journal and alerts on this device were removed.
            var local_data_removed: Bool
        }

        public func run(_ context: CommandContext) async throws {
            // Whose data this device keeps, asked before the session goes.
            let account = forgetDevice ? try context.localAccount() : nil
            let outcome = try await context.ceremonies().logout(forgetDevice: forgetDevice)
            if let account { try context.world.accounts.forget(account) }
            let record = Record(
                signed_out: outcome.hadSession, revoked_on_server: outcome.revokedOnServer,
                server_session_lapses_at: outcome.lapsesAt, forgot_device: outcome.forgotDevice,
                local_data_removed: account != nil)
            if context.format == .json {
                try context.emit([record], columns: []) { _ in [] }
            }
            if let lapse = outcome.lapsesAt {
                let why = outcome.unconfirmedBecause == .unreachable ? "The server could not be reached" : "The server did not confirm the sign-out"
                context.say("Signed out on this device. \(why); its session will lapse by itself at \(context.peopleMoment(lapse)).")
            } else if context.format == .text {
                context.say(outcome.hadSession ? "Signed out of \(context.origin)." : "Not signed in to \(context.origin); nothing to revoke.")
            }
            if outcome.forgotDevice && context.format == .text {
                context.say(
                    "This device's passkey for \(context.origin) is destroyed"
                        + (account == nil ? "." : ", with the account's cache, order journal and alerts on this device."))
            }
        }
    }
}

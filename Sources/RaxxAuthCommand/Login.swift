import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore

extension RaxxAuth {
    /// `raxx-auth login`: sign in with this device's passkey.
    public struct Login: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "login",
            abstract: "Sign in with this device's passkey.",
            discussion: """
                Signs a fresh challenge with the passkey, which the PIN unlocks (asked on the terminal, or read \
                with --pin-fd). The session's tokens are sealed in the keystore: a 15-minute access token, \
                renewed silently while the session lives, so scheduled jobs keep working. After five wrong PINs \
                the passkey locks. 
                """ + connectivity.helpLine
        )

        @Option(help: ArgumentHelp("The account to sign in to (default: the one this device's passkey belongs to).", valueName: "email"))
        var email: String?

        @OptionGroup var pin: PINOptions
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let session = try await context.ceremonies().login(email: email, pin: context.pinPrompt(pin.source))
            try context.signedIn(session)
            try SessionRecord(session, context: context).emit(in: context)
            if context.format == .text { context.say("Signed in as \(session.email).") }
        }
    }
}

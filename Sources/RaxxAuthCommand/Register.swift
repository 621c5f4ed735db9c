import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore
import RaxxDomain

extension RaxxAuth {
    /// `raxx-auth register`: create this device's passkey and sign in.
    public struct Register: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "register",
            abstract: "Create a passkey on this device and sign in.",
            discussion: """
                Creates an ES256 (P-256) passkey in the software authenticator and registers it with Raptor. \
                Raptor first emails a one-time code to the address (a run of digits, good once for 10 \
                minutes; asking again mails the same code; wrong codes are counted per address, and past \
                the server's budget it says when to try again, exit 75): type it when asked, or pass it \
                on a file descriptor with --code-fd. \
                The same command adds a passkey on a new device to an existing account, and is the way \
                back after a lost or locked passkey: the code proves the address is yours, and the \
                account is emailed that a passkey was added. \
                The PIN you choose protects the passkey's private key: without it the passkey cannot sign. \
                On a terminal the PIN is asked twice; otherwise pass it on a file descriptor with --pin-fd. \
                A PIN or a code never comes from the command line or the environment. 
                """ + connectivity.helpLine
        )

        @Option(help: ArgumentHelp("The account's email address.", valueName: "email"))
        var email: String

        @Option(name: .customLong("display-name"), help: ArgumentHelp("The name shown for the account.", valueName: "name"))
        var displayName: String?

        @OptionGroup var pin: PINOptions
        @OptionGroup var code: CodeOptions
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func validate() throws {
            do {
                _ = try EmailAddress.normalized(email)
            } catch {
                throw ValidationError("--email \(error).")
            }
        }

        public func run(_ context: CommandContext) async throws {
            let session = try await context.ceremonies().register(
                email: email, displayName: displayName, pin: context.pinPrompt(pin.source),
                code: context.codePrompt(code.source), retry: context.codeRetry(code.source))
            try context.signedIn(session)
            try SessionRecord(session, context: context).emit(in: context)
            if context.format == .text { context.say("Passkey created; signed in as \(session.email).") }
        }
    }
}

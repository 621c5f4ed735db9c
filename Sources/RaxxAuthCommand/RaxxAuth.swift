import ArgumentParser
import RaxxCLI
import RaxxCore

/// `raxx-auth`: passkey sign-in and the session's lifecycle.
public struct RaxxAuth: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-auth",
        abstract: "Sign in to Raxx with a passkey and manage the session.",
        discussion: """
        Raxx accepts passkeys only: there are no passwords. Session tokens are sealed in a keystore \
        file that only this device can open.
        """,
        version: RaxxVersion.current,
        subcommands: [Register.self, Login.self, Status.self, WhoAmI.self, Logout.self, Ping.self, Activity.self, Passkeys.self]
    )

    public init() {}
}

import ArgumentParser
import RaxxCLI
import RaxxCore

/// `raxx-auth`: passkey sign-in and the session's lifecycle.
public struct RaxxAuth: AsyncParsableCommand, HasExamples {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-auth",
        abstract: "Sign in to Raxx with a passkey and manage the session.",
        discussion: Example.discussion(
            """
            Raxx accepts passkeys only: there are no passwords. Session tokens are sealed in a keystore \
            file that only this device can open.
            """, examples),
        version: RaxxVersion.line(tool: "raxx-auth"),
        subcommands: [Register.self, Login.self, Status.self, WhoAmI.self, Logout.self, Ping.self, Activity.self, Sessions.self, Passkeys.self, Version.self]
    )

    public init() {}

    /// What --help and the man page show under EXAMPLES (each is parsed by the tests).
    public static let examples: [Example] = [
        Example("Register this device: the emailed code and a new PIN are asked for", "raxx-auth register --email you@example.com"),
        Example("Sign in again with this device's passkey", "raxx-auth login"),
        Example("Is this device signed in? Offline; exit 4 when not", "raxx-auth status"),
        Example("The account signed in, as JSON", "raxx-auth whoami --json"),
        Example("Is Raptor answering, and how fast (exit 69 when not)", "raxx-auth ping"),
        Example("The account's recent sign-ins and changes", "raxx-auth activity --format text"),
        Example("Where the account is signed in now", "raxx-auth sessions"),
        Example("Sign out, and forget this device's passkey and data", "raxx-auth logout --forget-device"),
    ]
}

extension RaxxAuth {
    /// `raxx-auth version`.
    public struct Version: VersionVerb {
        public static let configuration = versionConfiguration
        public static let tool = "raxx-auth"
        @OptionGroup public var global: GlobalOptions
        public init() {}
    }
}

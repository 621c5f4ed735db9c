import ArgumentParser
import Foundation
import RaxxCore

#if canImport(Glibc)
    import Glibc
#endif

/// `raxx-sandbox`: a local Raptor built from the same spec, with real state in SQLite.
public struct RaxxSandboxTool: AsyncParsableCommand, HasExamples {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-sandbox",
        abstract: "Run a local Raptor server for demos, tests and benchmarks.",
        discussion: Example.discussion(
            """
            The sandbox implements the Raptor API from the same OpenAPI spec as the tools, on SQLite: it \
            keeps real accounts, sessions, orders, fills and a change log. It listens on loopback by default.
            """, examples),
        version: RaxxVersion.line(tool: "raxx-sandbox"),
        subcommands: [Serve.self, Seed.self, Churn.self, Staff.self, APNs.self, ErasureRules.self, Version.self]
    )

    public init() {}

    /// What --help and the man page show under EXAMPLES (each is parsed by the tests).
    public static let examples: [Example] = [
        Example("A sandbox on a file, for the tools to use", "raxx-sandbox serve --port 8080 --db sandbox.sqlite"),
        Example("An account with history to explore", "raxx-sandbox seed --db sandbox.sqlite --email trader@example.com --positions 200 --fills 2000"),
        Example("Make a registered user support staff", "raxx-sandbox staff grant --db sandbox.sqlite --email support@example.com"),
        Example(
            "A local APNs endpoint for raxx-notify push", "raxx-sandbox apns --tls-dir apns-tls --team-id DEF123GHIJ --key-id ABC123DEFG --public-key key.pem"),
        Example("The erasure rules, as raxx(7) shows them", "raxx-sandbox erasure-rules"),
    ]
}

extension RaxxSandboxTool {
    /// What `main()` does, but `--help` and `help VERB` are laid out as the other tools' are (gh's:
    /// USAGE, the summary, the options and verbs, EXAMPLES, where to learn more).
    public static func mainLayingOutHelp() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .success, let help = HelpLayout.help(fullMessage(for: error), examples: examples) {
                _ = help.withCString { write(1, $0, strlen($0)) }
                Glibc.exit(0)
            }
            exit(withError: error)
        }
    }
}

/// Writes one line to stdout at once (the sandbox's stdout carries only data lines).
func printLine(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(1, $0, strlen($0)) }
}

/// Writes one line to stderr at once.
func printError(_ text: String) {
    let line = text + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

extension RaxxSandboxTool {
    /// `raxx-sandbox version`: what --version says.
    struct Version: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "version",
            abstract: "Show the version, and the commit it was built from with its date.")
        func run() { print(RaxxVersion.line(tool: "raxx-sandbox")) }
    }
}

import ArgumentParser
import Foundation
import RaxxCore

/// `raxx-sandbox`: a local Raptor built from the same spec, with real state in SQLite.
public struct RaxxSandboxTool: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-sandbox",
        abstract: "Run a local Raptor server for demos, tests and benchmarks.",
        discussion: """
        The sandbox implements the Raptor API from the same OpenAPI spec as the tools, on SQLite: it \
        keeps real accounts, sessions, orders, fills and a change log. It listens on loopback by default.
        """,
        version: RaxxVersion.current,
        subcommands: [Serve.self, Seed.self, Churn.self, Staff.self, APNs.self, ErasureRules.self]
    )

    public init() {}
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

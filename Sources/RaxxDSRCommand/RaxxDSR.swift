import ArgumentParser
import RaxxCLI
import RaxxCore

/// `raxx-dsr`: Handle GDPR data-subject requests (staff only).
public struct RaxxDSR: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-dsr",
        abstract: "Handle GDPR data-subject requests (staff only).",
        discussion: """
        Export everything held about a person, or plan and carry out an erasure.
        """,
        version: RaxxVersion.current
    )

    public init() {}
}

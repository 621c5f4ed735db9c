import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxDSR

/// `raxx-dsr`: GDPR data-subject requests, run by hand by support staff.
public struct RaxxDSR: AsyncParsableCommand, HasExamples {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-dsr",
        abstract: "Handle GDPR data-subject requests (staff only).",
        discussion: Example.discussion(
            """
            Record access and erasure requests with their deadlines (one month from receipt, GDPR Art. \
            12(3)), verify the requester's identity, export everything held about a person (Art. 15, \
            20), plan an erasure, approve it with a passkey step-up and apply it once (Art. 17), and \
            keep a signed receipt. Every verb needs a staff session (others exit 77, "Staff only"), and \
            every verb but verify-receipt needs the network. From cron: \
            0 8 * * * raxx-dsr list --due-within 7d --format text; raxx-dsr list --overdue --format text
            """, examples),
        version: RaxxVersion.line(tool: "raxx-dsr"),
        subcommands: [
            Open.self, VerifyIdentity.self, Extend.self, List.self, Show.self, Cancel.self, Refuse.self,
            Export.self, Plan.self, Apply.self, Receipt.self, VerifyReceipt.self, Audit.self, Version.self,
        ]
    )

    public init() {}

    /// What --help and the man page show under EXAMPLES (each is parsed by the tests).
    public static let examples: [Example] = [
        Example("Record an erasure request from a support ticket", "raxx-dsr open --email person@example.com --kind erasure --ticket SUP-1234"),
        Example("Say how the requester's identity was checked", "raxx-dsr verify-identity dsr_01HZX3 --method 'reply from the account email'"),
        Example("Requests due within a week", "raxx-dsr list --due-within 7d --format text"),
        Example(
            "Export an access request, encrypted to the requester's age key",
            "raxx-dsr export dsr_01HZX4 --out export.age --encrypt-to age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq"),
        Example(
            "Or with a passphrase asked on the terminal (tell it to the requester another way)", "raxx-dsr export dsr_01HZX4 --out export.age --passphrase"),
        Example("See what an erasure would remove or keep", "raxx-dsr plan dsr_01HZX3"),
        Example("Apply it, approved with your passkey", "raxx-dsr apply dsr_01HZX3 --plan-hash 9f2c4e"),
        Example("Check a receipt's signature, offline", "raxx-dsr verify-receipt receipt.json"),
    ]
}

/// A raxx-dsr verb: network-required unless it says otherwise, with the DSR files as its service.
protocol DSRVerb: RaxxCommand {}

extension DSRVerb {
    public static var tool: String { "raxx-dsr" }
    public static var connectivity: ConnectivityRequirement { .networkRequired }
    public static func liveServices(_ configuration: RaxxConfiguration) -> [Provided] { [Provided(FileDSRFiles(configuration), as: (any DSRFiles).self)] }
}

/// Requests as table rows or JSON Lines (the spec's field names).
enum RequestOutput {
    /// (An erased subject is an 80-character keyed hash: shortened on a terminal, whole in JSON.)
    static let columns: [Table.Column] = [
        .init("ID", importance: 10, elidable: true), .init("Kind", importance: 7), .init("Status", importance: 9),
        .init("Due", importance: 8), .init("Ticket", importance: 5, elidable: true),
        .init("Subject", importance: 6, elidable: true),
    ]

    static func row(_ r: Components.Schemas.DSRRequest) -> [String] {
        [r.id, r.kind.rawValue, r.status.rawValue, r.dueOn + (r.overdue ? " (overdue)" : ""), r.ticket, r.subject]
    }

    static func emit(_ requests: [Components.Schemas.DSRRequest], in context: CommandContext) throws {
        try context.emit(requests, columns: columns, row: row)
    }
}

extension Components.Schemas.DSRKind: ExpressibleByArgument {}
extension Components.Schemas.DSRStatus: ExpressibleByArgument {}

extension RaxxDSR {
    /// `raxx-dsr version`.
    public struct Version: VersionVerb {
        public static let configuration = versionConfiguration
        public static let tool = "raxx-dsr"
        @OptionGroup public var global: GlobalOptions
        public init() {}
    }
}

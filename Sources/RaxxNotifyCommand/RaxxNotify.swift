import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxDomain
import RaxxStore
import RaxxWire

/// `raxx-notify`: the account's alerts, and opt-in push devices.
public struct RaxxNotify: AsyncParsableCommand, HasExamples {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-notify",
        abstract: "Receive Raxx alerts and manage push delivery.",
        discussion: Example.discussion(
            """
            Alerts: fill confirmed, order rejected, order cancelled (by the dead man's switch), session \
            expiring, security. They come as JSON Lines \
            (a table on a terminal), newest last. Push is opt-in: nothing is registered without \
            raxx-notify devices add. Email is the only contact channel. From cron: \
            */5 * * * * raxx-notify watch --once --format text
            """, examples),
        version: RaxxVersion.line(tool: "raxx-notify"),
        subcommands: [List.self, Watch.self, Devices.self, Push.self, Version.self]
    )

    public init() {}

    /// What --help and the man page show under EXAMPLES (each is parsed by the tests).
    public static let examples: [Example] = [
        Example("The newest alerts", "raxx-notify list --format text"),
        Example("Fill confirmations of the last day", "raxx-notify list --type fill_confirmed --since 24h"),
        Example("Follow alerts as they come", "raxx-notify watch"),
        Example("From cron: what came since the last run", "raxx-notify watch --once --format text"),
        Example(
            "Opt a device into push for fills",
            "raxx-notify devices add --environment sandbox --alerts fill_confirmed --token 3f2a9c41b7e05d6a8f1c2b3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a7b"),
        Example(
            "Push a JSON Lines file of notifications through APNs",
            "raxx-notify push --key-file AuthKey.p8 --key-id ABC123DEFG --team-id DEF123GHIJ --topic app.raxx.ios < pushes.jsonl"),
    ]
}

/// A raxx-notify verb.
protocol RaxxNotifyVerb: StoreCommand {}

extension RaxxNotifyVerb {
    public static var tool: String { "raxx-notify" }
}

/// `--type fill_confirmed,order_rejected`: alert types, comma-separated.
struct AlertTypes: ExpressibleByArgument, Sendable {
    var types: Set<AlertType>

    /// The shell completes each type (one; more are added after a comma by hand).
    static var completion: CompletionKind { .list(AlertType.allCases.map(\.rawValue)) }

    init?(argument: String) {
        var types = Set<AlertType>()
        for name in argument.split(separator: ",", omittingEmptySubsequences: false) {
            guard let type = AlertType(rawValue: name.trimmingCharacters(in: .whitespaces)) else { return nil }
            types.insert(type)
        }
        guard !types.isEmpty else { return nil }
        self.types = types
    }

    static var names: String { AlertType.allCases.map(\.rawValue).joined(separator: ", ") }
}

/// Alerts as JSON Lines (the spec's field names) or as table rows.
enum AlertOutput {
    static let columns: [Table.Column] = [.init("Seq", .right), .init("Time"), .init("Type"), .init("Title")]

    static func row(_ alert: Components.Schemas.Event, time: (Date) -> String) -> [String] {
        ["\(alert.seq)", time(alert.createdAt), alert._type.rawValue, alert.title]
    }

    /// One alert as its own line, written and flushed at once (watch); throws when the line could
    /// not be written, so the cursor does not pass an alert nobody got.
    static func line(_ alert: Components.Schemas.Event, in context: CommandContext) throws {
        switch context.format {
        case .json:
            context.io.stdout.write(try JSONLines.line(alert) + "\n")
        case .text:
            context.io.stdout.write(TerminalText.printable(row(alert, time: context.peopleTime).joined(separator: "  ")) + "\n")
        }
        context.io.stdout.flush()
        try context.io.checkOutput()
    }
}

extension RaxxNotify {
    /// `raxx-notify version`.
    public struct Version: VersionVerb {
        public static let configuration = versionConfiguration
        public static let tool = "raxx-notify"
        @OptionGroup public var global: GlobalOptions
        public init() {}
    }
}

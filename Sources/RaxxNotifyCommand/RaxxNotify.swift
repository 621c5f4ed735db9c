import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxDomain
import RaxxStore
import RaxxWire

/// `raxx-notify`: the account's alerts, and opt-in push devices.
public struct RaxxNotify: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-notify",
        abstract: "Receive Raxx alerts and manage push delivery.",
        discussion: """
        Alerts: fill confirmed, order rejected, order cancelled (by the dead man's switch), session \
        expiring, security. They come as JSON Lines \
        (a table on a terminal), newest last. Push is opt-in: nothing is registered without \
        raxx-notify devices add. Email is the only contact channel. From cron: \
        */5 * * * * raxx-notify watch --once --format text
        """,
        version: RaxxVersion.current,
        subcommands: [List.self, Watch.self, Devices.self, Push.self]
    )

    public init() {}
}

/// A raxx-notify verb.
protocol RaxxNotifyVerb: StoreCommand {}

extension RaxxNotifyVerb {
    public static var tool: String { "raxx-notify" }
}

/// `--type fill_confirmed,order_rejected`: alert types, comma-separated.
struct AlertTypes: ExpressibleByArgument, Sendable {
    var types: Set<AlertType>

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

    static func row(_ alert: Components.Schemas.Event) -> [String] {
        ["\(alert.seq)", RFC3339.string(from: alert.createdAt), alert._type.rawValue, alert.title]
    }

    /// One alert as its own line, written and flushed at once (watch); throws when the line could
    /// not be written, so the cursor does not pass an alert nobody got.
    static func line(_ alert: Components.Schemas.Event, in context: CommandContext) throws {
        switch context.format {
        case .json:
            context.io.stdout.write(try JSONLines.line(alert) + "\n")
        case .text:
            context.io.stdout.write(TerminalText.printable(row(alert).joined(separator: "  ")) + "\n")
        }
        context.io.stdout.flush()
        try context.io.checkOutput()
    }
}

import Foundation
import RaxxAPI
import RaxxCore
import RaxxWire

/// An audit trail, page by page, as JSON Lines or one table.
public enum AuditPages {
    public static let columns: [Table.Column] = [
        .init("Seq", .right), .init("Time"), .init("Actor"), .init("Action"), .init("Subject"),
        .init("About"),
    ]

    /// What an event is about, from its details: the order (with what it was) or the device
    /// (with its token's last 8 characters), the ticket, or nothing more to say.
    public static func about(_ event: Components.Schemas.AuditEvent) -> String {
        let details = event.details?.additionalProperties ?? [:]
        if let order = details["order_id"] ?? details["client_order_id"] {
            let what = [details["side"], details["qty"], details["symbol"]].compactMap { $0 }.joined(separator: " ")
            return "order \(order)" + (what.isEmpty ? "" : " (\(what))")
        }
        if let device = details["device_id"] {
            return "device \(device)" + (details["token_suffix"].map { " (…\($0))" } ?? "")
        }
        if let ticket = details["ticket"] { return "ticket \(ticket)" }
        return "-"
    }

    /// Prints every page from `start`; answers how many events there were.
    @discardableResult
    public static func print(
        in context: CommandContext, from start: Int64,
        page: (Int64) async throws -> Components.Schemas.AuditPage
    ) async throws -> Int {
        var cursor = start
        var all: [Components.Schemas.AuditEvent] = []
        var count = 0
        while true {
            let p = try await page(cursor)
            count += p.events.count
            if context.format == .json {
                for event in p.events { context.io.stdout.write(try JSONLines.line(event) + "\n") }
                context.io.stdout.flush()
            } else {
                all += p.events
            }
            guard p.hasMore, p.cursor > cursor else { break }
            cursor = p.cursor
        }
        if context.format == .text {
            context.writeTable(
                Table(
                    columns: columns,
                    rows: all.map {
                        ["\($0.seq)", context.peopleTime($0.at), $0.actor, $0.action, $0.subject, about($0)]
                    }))
            context.io.stdout.flush()
        }
        return count
    }
}

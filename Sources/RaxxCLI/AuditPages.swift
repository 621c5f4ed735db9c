import Foundation
import RaxxAPI
import RaxxCore
import RaxxWire

/// An audit trail, page by page, as JSON Lines or one table.
public enum AuditPages {
    public static let columns: [Table.Column] = [.init("Seq", .right), .init("Time"), .init("Actor"), .init("Action"), .init("Subject")]

    /// Prints every page from `start`; answers how many events there were.
    @discardableResult
    public static func print(in context: CommandContext, from start: Int64,
                      page: (Int64) async throws -> Components.Schemas.AuditPage) async throws -> Int {
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
            context.io.stdout.write(Table(columns: columns, rows: all.map {
                ["\($0.seq)", RFC3339.string(from: $0.at), $0.actor, $0.action, $0.subject]
            }).render())
            context.io.stdout.flush()
        }
        return count
    }
}

import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain

/// What a page of the feed asks for: the user's events after `cursor`, oldest first.
struct EventQuery: Sendable, Equatable {
    var user: String
    var after: Int64
    var limit: Int
    /// Only these types (nil: all).
    var types: [String]? = nil
    /// Only events created at or after this time.
    var since: Date? = nil
}

struct EventPage: Sendable {
    var events: [Components.Schemas.Event]
    /// More events match after the page's last.
    var hasMore: Bool
}

/// A session whose end is near, as the expiry scan notes it.
struct ExpiringSession: Sendable, Equatable {
    var sessionID: String
    var userID: String
    var expiresAt: Date
}

/// The alerts feed's table. Every event is written through `EventLog.insert`, inside the
/// transaction of the change that causes it, and its user's long polls are signalled when that
/// transaction commits (never when it rolls back).
enum EventLog {
    static func insert(_ db: Database, _ e: NewEvent, sessionID: String? = nil, notifier: EventNotifier) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO events (user_id, type, title, body, order_id, symbol, side, qty, price_ticks, reason, expires_at, session_id, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            e.user, e.type, e.title, e.body, e.order, e.symbol, e.side, e.qty, e.price, e.reason,
            e.expiresAt?.timeIntervalSince1970, sessionID, e.at.timeIntervalSince1970,
        ])
        notifier.signalOnCommit(e.user)
    }

    static let columns = "seq, type, title, body, order_id, symbol, side, qty, price_ticks, reason, expires_at, created_at"

    /// A row of `columns` as the API shows it; a type or side outside the spec's is an
    /// `UnknownStoredValue`.
    static func event(_ row: Row) throws -> Components.Schemas.Event {
        let type = try Components.Schemas.EventType.stored(row["type"], table: "events", column: "type")
        let side: String? = row["side"], price: Int64? = row["price_ticks"], expires: Double? = row["expires_at"]
        return try Components.Schemas.Event(
            seq: row["seq"], _type: type, createdAt: Date(timeIntervalSince1970: row["created_at"]), title: row["title"],
            body: row["body"], orderId: row["order_id"], symbol: row["symbol"],
            side: side.map { try Components.Schemas.Side.stored($0, table: "events", column: "side") },
            qty: row["qty"], price: price.map { Money.string(ticks: $0) }, reason: row["reason"],
            expiresAt: expires.map { Date(timeIntervalSince1970: $0) })
    }
}

/// The alerts feed on SQLite.
struct EventStore: Sendable {
    let writer: StoreWriter
    let notifier: EventNotifier

    /// One page of `query`'s events.
    func events(_ q: EventQuery) async throws -> EventPage {
        try await writer.read { db -> EventPage in
            var clauses = ["user_id = ?", "seq > ?"]
            var arguments: StatementArguments = [q.user, q.after]
            if let types = q.types {
                guard !types.isEmpty else { return EventPage(events: [], hasMore: false) }
                clauses.append("type IN (\(databaseQuestionMarks(count: types.count)))")
                arguments += StatementArguments(types)
            }
            if let since = q.since {
                clauses.append("created_at >= ?")
                arguments += [since.timeIntervalSince1970]
            }
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(EventLog.columns) FROM events WHERE \(clauses.joined(separator: " AND ")) ORDER BY seq LIMIT ?
                    """, arguments: arguments + [q.limit + 1])
            return try EventPage(events: rows.prefix(q.limit).map(EventLog.event), hasMore: rows.count > q.limit)
        }
    }

    /// Writes `session_expiring` for every live session ending within `window` of `now` that has
    /// not had one yet (once per session), and answers those sessions. One transaction.
    func noteExpiringSessions(now: Date, window: TimeInterval) async throws -> [ExpiringSession] {
        let notifier = self.notifier
        return try await writer.write { db -> [ExpiringSession] in
            let t = now.timeIntervalSince1970
            let due = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT id, user_id, expires_at FROM sessions
                        WHERE revoked_at IS NULL AND expires_at > ? AND expires_at <= ?
                        AND NOT EXISTS (SELECT 1 FROM events WHERE events.type = \(Components.Schemas.EventType.sessionExpiring.sql) AND
                        events.session_id = sessions.id)
                        ORDER BY expires_at
                        """), arguments: [t, t + window]
            ).map {
                ExpiringSession(sessionID: $0["id"], userID: $0["user_id"], expiresAt: Date(timeIntervalSince1970: $0["expires_at"]))
            }
            for s in due {
                let minutes = max(Int((s.expiresAt.timeIntervalSince(now) / 60).rounded(.up)), 1)
                try EventLog.insert(
                    db,
                    NewEvent(
                        user: s.userID, type: .sessionExpiring, order: nil,
                        title: "Your session ends in \(minutes) minute\(minutes == 1 ? "" : "s").",
                        body: "Sign in again to keep trading.", expiresAt: s.expiresAt, at: now),
                    sessionID: s.sessionID, notifier: notifier)
            }
            return due
        }
    }
}

import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire

/// raxx-notify's local state for one server: the alerts already fetched (so `list` answers offline,
/// saying how old they are) and `watch`'s cursor, saved only after an alert's line was written.
/// In the state folder, beside the journal. Migrations are append-only.
public final class AlertStore: Sendable {
    let writer: any DatabaseWriter
    let url: URL?

    /// Opens (creating it and its folder) the file at `url`, under `folders`' rule.
    public static func open(at url: URL, in folders: PrivateFolders) throws(RaxxError) -> AlertStore {
        do {
            return try AlertStore(writer: try openPool(at: url, in: folders), url: url)
        } catch let error as RaxxError {
            throw error
        } catch {
            throw RaxxError(
                code: .alertsUnreadable, message: "The alerts at \(url.path) cannot be opened: \(error).",
                hint: "Move the file aside; the next raxx-notify list fetches the alerts again.")
        }
    }

    /// An in-memory store, for tests.
    public static func inMemory() throws -> AlertStore { try AlertStore(writer: DatabaseQueue(), url: nil) }

    init(writer: any DatabaseWriter, url: URL?) throws {
        self.writer = writer
        self.url = url
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: alerts, fetch state, watch cursor") { db in
            try db.execute(
                sql: """
                    CREATE TABLE alerts (
                        seq INTEGER PRIMARY KEY,
                        type TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        json TEXT NOT NULL
                    );
                    CREATE INDEX alerts_created ON alerts(created_at);
                    CREATE TABLE alert_state (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        last_success_at REAL,
                        last_failure_at REAL,
                        watch_cursor INTEGER
                    );
                    INSERT INTO alert_state (id) VALUES (1);
                    """)
        }
        try migrator.migrate(writer)
    }

    /// Where the fetching stands.
    public struct State: Sendable, Equatable {
        public var lastSuccessAt: Date?
        public var lastFailureAt: Date?
        public var watchCursor: Int64?

        /// The last fetch failed for want of a connection (after the last success).
        public var lastFetchFailed: Bool {
            guard let failure = lastFailureAt else { return false }
            return lastSuccessAt.map { failure > $0 } ?? true
        }
    }

    public func state() throws -> State {
        try writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM alert_state WHERE id = 1") else { return State() }
            func date(_ column: String) -> Date? { (row[column] as Double?).map { Date(timeIntervalSince1970: $0) } }
            return State(lastSuccessAt: date("last_success_at"), lastFailureAt: date("last_failure_at"), watchCursor: row["watch_cursor"])
        }
    }

    /// Keeps `alerts` (again, when already kept) and notes a successful fetch at `at`.
    public func save(_ alerts: [Components.Schemas.Event], fetchedAt at: Date) throws {
        let encoder = JSONLines.encoder()
        let rows = try alerts.map { ($0, String(decoding: try encoder.encode($0), as: UTF8.self)) }
        try writer.write { db in
            for (alert, json) in rows {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO alerts (seq, type, created_at, json) VALUES (?, ?, ?, ?)",
                    arguments: [alert.seq, alert._type.rawValue, alert.createdAt.timeIntervalSince1970, json])
            }
            try db.execute(sql: "UPDATE alert_state SET last_success_at = ? WHERE id = 1", arguments: [at.timeIntervalSince1970])
        }
    }

    /// Notes a fetch that failed for want of a connection.
    public func recordFailure(at: Date) throws {
        try writer.write { db in
            try db.execute(sql: "UPDATE alert_state SET last_failure_at = ? WHERE id = 1", arguments: [at.timeIntervalSince1970])
        }
    }

    /// The highest seq kept (0 when none).
    public func latestSeq() throws -> Int64 {
        try writer.read { db in try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM alerts") ?? 0 }
    }

    /// Saves `watch`'s cursor: the last alert whose line was written.
    public func saveWatchCursor(_ cursor: Int64) throws {
        try writer.write { db in
            try db.execute(sql: "UPDATE alert_state SET watch_cursor = ? WHERE id = 1", arguments: [cursor])
        }
    }

    /// The kept alerts after `cursor`, at or after `since`, of `types`: the newest `limit`, oldest first.
    public func alerts(after cursor: Int64? = nil, since: Date? = nil, types: Set<AlertType>? = nil, limit: Int) throws -> [Components.Schemas.Event] {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let cursor { clauses.append("seq > ?"); arguments += [cursor] }
        if let since { clauses.append("created_at >= ?"); arguments += [since.timeIntervalSince1970] }
        if let types {
            clauses.append("type IN (\(types.map { _ in "?" }.joined(separator: ", ")))")
            for type in types.map(\.rawValue).sorted() { arguments += [type] }
        }
        let filter = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        let texts = try writer.read { db in
            try String.fetchAll(
                db, sql: "SELECT json FROM (SELECT seq, json FROM alerts\(filter) ORDER BY seq DESC LIMIT ?) ORDER BY seq",
                arguments: arguments + [limit])
        }
        let decoder = Self.decoder
        return try texts.map { try decoder.decode(Components.Schemas.Event.self, from: Data($0.utf8)) }
    }

    static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = RFC3339.date(from: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "Not an RFC 3339 date: \(text)"))
            }
            return date
        }
        return d
    }()
}

import Foundation
import GRDB
import RaxxAPI
import RaxxCore

/// A device an event goes to: active, opted into the event's type, registered before the event.
struct PushTarget: Sendable, Equatable {
    var deviceID: String
    var token: String
    var registeredAt: Date
}

/// An event the dispatcher has not handed out yet, with the devices it goes to; or, for a row
/// holding a type or side outside the spec's, why it cannot be read: the dispatcher logs it and
/// goes past, so that one such row does not hold up every push after it.
struct PendingPush: Sendable {
    var seq: Int64
    var user: String
    var content: Content

    enum Content: Sendable {
        case push(Components.Schemas.Event, targets: [PushTarget])
        case unreadable(UnknownStoredValue)
    }
}

/// On SQLite: the cursor is one row of `push_cursor`; targets come from
/// `device_tokens`, whose `alerts` column lists the types a device opted into.
struct PushDispatchStore: Sendable {
    let writer: StoreWriter

    /// Places the dispatcher's cursor at the newest event unless it has one already: what was
    /// written before push was turned on is never pushed. Answers the cursor.
    func start() async throws -> Int64 {
        try await writer.write { db -> Int64 in
            if let seq = try Int64.fetchOne(db, sql: "SELECT seq FROM push_cursor WHERE id = 1") { return seq }
            let newest = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM events") ?? 0
            try db.execute(sql: "INSERT INTO push_cursor (id, seq) VALUES (1, ?)", arguments: [newest])
            return newest
        }
    }

    /// Up to `limit` events after `cursor`, oldest first, with their targets.
    func pending(after cursor: Int64, limit: Int) async throws -> [PendingPush] {
        try await writer.read { db -> [PendingPush] in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT user_id, \(EventLog.columns) FROM events WHERE seq > ? ORDER BY seq LIMIT ?
                    """, arguments: [cursor, limit])
            var devices: [String: [(target: PushTarget, alerts: Set<String>)]] = [:]
            return try rows.map { row -> PendingPush in
                let user: String = row["user_id"], type: String = row["type"], created: Double = row["created_at"]
                if devices[user] == nil {
                    devices[user] = try Row.fetchAll(
                        db,
                        sql: """
                            SELECT id, token, alerts, created_at FROM device_tokens WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at, rowid
                            """, arguments: [user]
                    ).map {
                        (
                            PushTarget(deviceID: $0["id"], token: $0["token"], registeredAt: Date(timeIntervalSince1970: $0["created_at"])),
                            Set(($0["alerts"] as String).split(separator: ",").map(String.init))
                        )
                    }
                }
                let targets = (devices[user] ?? []).filter { $0.alerts.contains(type) && $0.target.registeredAt.timeIntervalSince1970 <= created }
                do {
                    return try PendingPush(seq: row["seq"], user: user, content: .push(EventLog.event(row), targets: targets.map(\.target)))
                } catch let unreadable as UnknownStoredValue {
                    return PendingPush(seq: row["seq"], user: user, content: .unreadable(unreadable))
                }
            }
        }
    }

    /// Every event up to `seq` has been dispatched.
    func advance(to seq: Int64) async throws {
        try await writer.write { db in
            try db.execute(sql: "UPDATE push_cursor SET seq = MAX(seq, ?) WHERE id = 1", arguments: [seq])
        }
    }

    /// APNs answered that the device's token is not valid since `unregisteredAt`: revokes the
    /// device when it was registered before then (audited `device.unregistered`). False when it
    /// was registered again since, or is gone or revoked already.
    func revokeUnregistered(deviceID: String, unregisteredAt: Date, now: Date) async throws -> Bool {
        try await writer.write { db -> Bool in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT user_id, token, created_at FROM device_tokens WHERE id = ? AND revoked_at IS NULL
                        """, arguments: [deviceID])
            else { return false }
            let created: Double = row["created_at"], user: String = row["user_id"], token: String = row["token"]
            guard created < unregisteredAt.timeIntervalSince1970 else { return false }
            try db.execute(sql: "UPDATE device_tokens SET revoked_at = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, deviceID])
            try SandboxDatabase.audit(
                db,
                AuditEntry(
                    at: now, actor: "apns", action: .deviceUnregistered, subject: user,
                    details: [
                        "device_id": deviceID, "token_suffix": String(token.suffix(8)),
                        "unregistered_at": String(Int64((unregisteredAt.timeIntervalSince1970 * 1000).rounded())),
                    ]))
            return true
        }
    }
}

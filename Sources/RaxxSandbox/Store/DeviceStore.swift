import Foundation
import GRDB
import RaxxAPI

/// A device to register: the token as APNs gave it (lowercase hex).
struct NewDevice: Sendable {
    var id: String
    var user: String
    var token: String
    var environment: String
    var label: String?
    var alerts: [String]
    var at: Date
}

/// A registration's outcome.
struct RegisteredDevice: Sendable {
    var device: Components.Schemas.Device
    /// The same token was registered for this user already (the device answers under its ID,
    /// re-activated and with the new label, environment and alerts).
    var existed: Bool
    /// It existed and had been revoked.
    var reactivated: Bool
}

/// Devices on SQLite: `device_tokens` keeps the whole token (to push to it); the API
/// answers only its last 8 characters.
struct DeviceStore: Sendable {
    let writer: StoreWriter

    /// Registers `device` (audited `device.registered`, with the token's suffix only); the same
    /// token again for the same user answers the existing device, re-activated if revoked.
    func register(_ d: NewDevice) async throws -> RegisteredDevice {
        try await writer.write { db -> RegisteredDevice in
            let t = d.at.timeIntervalSince1970
            let existing = try Row.fetchOne(
                db, sql: "SELECT id, revoked_at FROM device_tokens WHERE user_id = ? AND token = ?",
                arguments: [d.user, d.token])
            let id: String = existing?["id"] ?? d.id
            let revoked: Double? = existing?["revoked_at"]
            let reactivated = existing != nil && revoked != nil
            if existing != nil {
                try db.execute(
                    sql: """
                        UPDATE device_tokens SET environment = ?, label = ?, alerts = ?, revoked_at = NULL WHERE id = ?
                        """, arguments: [d.environment, d.label, d.alerts.joined(separator: ","), id])
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO device_tokens (id, user_id, token, environment, label, alerts, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [id, d.user, d.token, d.environment, d.label, d.alerts.joined(separator: ","), t])
            }
            var details = ["device_id": id, "token_suffix": String(d.token.suffix(8)), "environment": d.environment]
            if existing != nil { details["again"] = "true" }
            if reactivated { details["reactivated"] = "true" }
            try SandboxDatabase.audit(db, AuditEntry(at: d.at, actor: d.user, action: .deviceRegistered, subject: d.user, details: details))
            guard let device = try DeviceRecord.fetchOne(db, sql: "SELECT \(DeviceRecord.columns) FROM device_tokens WHERE id = ?", arguments: [id]) else {
                throw ProblemError.internalError
            }
            return try RegisteredDevice(device: device.api, existed: existing != nil, reactivated: reactivated)
        }
    }

    /// The user's active (not revoked) devices, oldest first.
    func activeDevices(user: String) async throws -> [Components.Schemas.Device] {
        try await writer.read { db in
            try DeviceRecord.fetchAll(
                db,
                sql: """
                    SELECT \(DeviceRecord.columns) FROM device_tokens WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at, rowid
                    """, arguments: [user]
            ).map { try $0.api }
        }
    }

    /// Revokes the user's device `id` (audited `device.revoked` the first time). False when the
    /// user has no such device.
    func revoke(id: String, user: String, now: Date) async throws -> Bool {
        try await writer.write { db -> Bool in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT token, revoked_at FROM device_tokens WHERE id = ? AND user_id = ?",
                    arguments: [id, user])
            else { return false }
            let revoked: Double? = row["revoked_at"]
            guard revoked == nil else { return true }  // revoked already: nothing changes
            try db.execute(sql: "UPDATE device_tokens SET revoked_at = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, id])
            try SandboxDatabase.audit(
                db,
                AuditEntry(
                    at: now, actor: user, action: .deviceRevoked, subject: user,
                    details: ["device_id": id, "token_suffix": String((row["token"] as String).suffix(8))]))
            return true
        }
    }
}

import Foundation
import GRDB
import RaxxAPI

/// `DeviceRepository` on SQLite: `device_tokens` keeps the whole token (to push to it); the API
/// answers only its last 8 characters.
struct GRDBDeviceRepository: DeviceRepository {
    let writer: any DatabaseWriter

    static let columns = "id, token, environment, label, alerts, created_at"

    static func device(_ row: Row) -> Components.Schemas.Device {
        let token: String = row["token"], environment: String = row["environment"], alerts: String = row["alerts"]
        return Components.Schemas.Device(
            id: row["id"], environment: Components.Schemas.Device.EnvironmentPayload(rawValue: environment) ?? .production,
            tokenSuffix: String(token.suffix(8)), label: row["label"],
            alerts: alerts.split(separator: ",").compactMap { Components.Schemas.EventType(rawValue: String($0)) },
            createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }

    func register(_ d: NewDevice) async throws -> RegisteredDevice {
        try await writer.write { db -> RegisteredDevice in
            let t = d.at.timeIntervalSince1970
            let existing = try Row.fetchOne(db, sql: "SELECT id, revoked_at FROM device_tokens WHERE user_id = ? AND token = ?",
                                            arguments: [d.user, d.token])
            let id: String = existing?["id"] ?? d.id
            let revoked: Double? = existing?["revoked_at"]
            let reactivated = existing != nil && revoked != nil
            if existing != nil {
                try db.execute(sql: """
                    UPDATE device_tokens SET environment = ?, label = ?, alerts = ?, revoked_at = NULL WHERE id = ?
                    """, arguments: [d.environment, d.label, d.alerts.joined(separator: ","), id])
            } else {
                try db.execute(sql: """
                    INSERT INTO device_tokens (id, user_id, token, environment, label, alerts, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [id, d.user, d.token, d.environment, d.label, d.alerts.joined(separator: ","), t])
            }
            var details = ["device_id": id, "token_suffix": String(d.token.suffix(8)), "environment": d.environment]
            if existing != nil { details["again"] = "true" }
            if reactivated { details["reactivated"] = "true" }
            try SandboxDatabase.audit(db, AuditEntry(at: d.at, actor: d.user, action: .deviceRegistered, subject: d.user, details: details))
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM device_tokens WHERE id = ?", arguments: [id]) else {
                throw ProblemError.internalError
            }
            return RegisteredDevice(device: Self.device(row), existed: existing != nil, reactivated: reactivated)
        }
    }

    func activeDevices(user: String) async throws -> [Components.Schemas.Device] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM device_tokens WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at, rowid
                """, arguments: [user]).map(Self.device)
        }
    }

    func revoke(id: String, user: String, now: Date) async throws -> Bool {
        try await writer.write { db -> Bool in
            guard let row = try Row.fetchOne(db, sql: "SELECT token, revoked_at FROM device_tokens WHERE id = ? AND user_id = ?",
                                             arguments: [id, user]) else { return false }
            let revoked: Double? = row["revoked_at"]
            guard revoked == nil else { return true } // revoked already: nothing changes
            try db.execute(sql: "UPDATE device_tokens SET revoked_at = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, id])
            try SandboxDatabase.audit(db, AuditEntry(at: now, actor: user, action: .deviceRevoked, subject: user,
                                                     details: ["device_id": id, "token_suffix": String((row["token"] as String).suffix(8))]))
            return true
        }
    }
}

import Foundation
import GRDB

/// One line of the append-only audit trail.
struct AuditEntry: Sendable, Equatable {
    var at: Date
    var actor: String
    var action: AuditAction
    var subject: String
    var details: [String: String] = [:]
}

/// The database's health.
struct HealthStore: Sendable {
    let writer: StoreWriter

    /// Throws when the database cannot be read.
    func ping() async throws {
        _ = try await writer.read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT 1")) }
    }
}

/// Appends to the audit trail.
struct AuditStore: Sendable {
    let writer: StoreWriter

    func record(_ entry: AuditEntry) async throws {
        try await writer.write { db in try SandboxDatabase.audit(db, entry) }
    }
}

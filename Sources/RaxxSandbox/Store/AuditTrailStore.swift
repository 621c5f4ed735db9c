import Foundation
import GRDB
import RaxxAPI

/// Whose audit trail: every event whose actor or subject is one of these identifiers.
struct AuditSubject: Sendable, Equatable {
    var userID: String
    var accountID: String?
}

struct AuditTrailPage: Sendable {
    var events: [Components.Schemas.AuditEvent]
    var hasMore: Bool
}

/// Reading the audit trail: a user's own, and a data subject's for support staff.
struct AuditTrailStore: Sendable {
    let writer: StoreWriter

    /// The subject's audit events after `cursor`. `seenBySubject`: staff members appear by their
    /// role ("support staff"), not their identity, as the subject sees them (staff see the person).
    func trail(of subject: AuditSubject, after cursor: Int64, limit: Int, seenBySubject: Bool) async throws -> AuditTrailPage {
        try await writer.read { db in
            let staff = seenBySubject ? try Self.staffIDs(db) : []
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, at, actor, action, subject, details FROM audit_events
                    WHERE seq > ?1 AND (actor = ?2 OR subject IN (?2, ?3)
                          OR subject IN (SELECT 'dsr:' || id FROM dsr_requests WHERE subject = (SELECT email FROM users WHERE id = ?2)))
                    ORDER BY seq LIMIT ?4
                    """, arguments: [cursor, subject.userID, subject.accountID ?? subject.userID, limit + 1])
            let events = rows.prefix(limit).map { row in
                var details = (try? JSONDecoder().decode([String: String].self, from: Data((row["details"] as String).utf8))) ?? [:]
                var actor: String = row["actor"]
                if seenBySubject { (actor, details) = Self.asSeenBySubject(actor: actor, details: details, subject: subject.userID, staff: staff) }
                return Components.Schemas.AuditEvent(
                    seq: row["seq"], at: Date(timeIntervalSince1970: row["at"]), actor: actor,
                    action: row["action"], subject: row["subject"],
                    details: details.isEmpty ? nil : .init(additionalProperties: details))
            }
            return AuditTrailPage(events: Array(events), hasMore: rows.count > limit)
        }
    }

    /// The user and account under `email`, if any.
    func subject(email: String) async throws -> AuditSubject? {
        try await writer.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT users.id, accounts.id AS account_id FROM users LEFT JOIN accounts ON accounts.user_id = users.id WHERE users.email = ?
                        """, arguments: [email])
            else { return nil }
            return AuditSubject(userID: row["id"], accountID: row["account_id"])
        }
    }

    /// What the subject sees of a staff member: the role, never the person.
    static let staffRole = "support staff"

    /// The IDs of users who are, or were, staff (a DSR action names its staff member in its details).
    static func staffIDs(_ db: Database) throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT id FROM users WHERE staff = 1"))
    }

    /// An audit event's actor and details as the subject sees them: a staff member by role.
    static func asSeenBySubject(actor: String, details: [String: String], subject: String, staff: Set<String>)
        -> (actor: String, details: [String: String])
    {
        var details = details
        let byStaff = details["staff"] != nil || (actor != subject && staff.contains(actor))
        if details["staff"] != nil { details["staff"] = staffRole }
        return (byStaff && actor != subject ? staffRole : actor, details)
    }
}

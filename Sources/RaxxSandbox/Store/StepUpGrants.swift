import Foundation
import GRDB

/// Step-up grants, spent inside the transaction of the action they approve (an order, an
/// erasure): a grant is good once, for its user and the one action hash it was bound to.
enum StepUpGrants {
    /// Marks the grant used; false when it is unknown, spent, expired, or bound to another user or action.
    static func consume(_ db: Database, grantHash: String, actionHash: String, userID: String, now: Date) throws -> Bool {
        try db.cachedStatement(
            sql: """
                UPDATE step_up_grants SET used_at = ? WHERE grant_hash = ? AND user_id = ? AND action_hash = ?
                AND used_at IS NULL AND expires_at > ?
                """
        ).execute(arguments: [now.timeIntervalSince1970, grantHash, userID, actionHash, now.timeIntervalSince1970])
        return db.changesCount == 1
    }
}

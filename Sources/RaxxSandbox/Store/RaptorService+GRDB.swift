import Foundation
import GRDB

extension RaptorService {
    /// Spends a step-up grant inside `db`'s transaction (the order handler does this through
    /// `TradingLedger`; kept for RaxxSessionTests, which check grants directly).
    func consumeStepUpGrant(_ db: Database, grant: String, actionHash: String, userID: String, now: Date) throws -> Bool {
        try TradingLedger(db: db, notifier: database.notifier).consumeStepUpGrant(
            grantHash: Tokens.hash(grant), actionHash: actionHash, userID: userID, now: now)
    }
}

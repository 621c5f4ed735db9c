import Foundation
import GRDB
import RaxxAPI
import RaxxDomain

/// Security alerts (`SecurityAlert`), raised inside the transaction of the change they are about:
/// the event on the user's feed (`EventLog`), then the email (`Mailer`).
enum SecurityAlerts {
    /// Raises `alert` for the user `userID`, mailed to `email`, or when nil to the address `users`
    /// holds for the user (no mail when the user is gone).
    static func raise(
        _ db: Database, _ alert: SecurityAlert, userID: String, mailing email: String? = nil, at now: Date, notifier: EventNotifier,
        mailer: Mailer
    ) throws {
        try EventLog.insert(
            db, NewEvent(user: userID, type: .securityAlert, order: nil, title: alert.title, body: alert.body, reason: alert.reason, at: now),
            notifier: notifier)
        if let email = try email ?? Accounts.email(db, userID: userID) {
            mailer.send(db, Mail(to: email, subject: alert.mailSubject, body: alert.mailBody(at: now)))
        }
    }
}

import Foundation
import GRDB
import RaxxAPI
import RaxxDomain

/// Security alerts (`SecurityAlert`), raised inside the transaction of the change they are about:
/// the event is written to the user's feed (`EventLog`), then the account is mailed (`Mailer`).
/// Both happen when the transaction commits, and neither when it rolls back.
enum SecurityAlerts {
    /// Raises `alert` for the user `userID`, mailed to the user's address as `users` holds it
    /// (looked up after the event is written; no mail when the user is gone).
    static func raise(_ db: Database, _ alert: SecurityAlert, userID: String, at now: Date, notifier: EventNotifier, mailer: Mailer) throws {
        try EventLog.insert(db, alert.event(user: userID, at: now), notifier: notifier)
        if let email = try Accounts.email(db, userID: userID) {
            mailer.send(db, alert.mail(to: email, at: now))
        }
    }

    /// Raises `alert` for the user `userID`, mailed to `email` (an address the caller has at hand,
    /// such as the one a registration was made with).
    static func raise(
        _ db: Database, _ alert: SecurityAlert, userID: String, mailing email: String, at now: Date, notifier: EventNotifier, mailer: Mailer
    ) throws {
        try EventLog.insert(db, alert.event(user: userID, at: now), notifier: notifier)
        mailer.send(db, alert.mail(to: email, at: now))
    }
}

extension SecurityAlert {
    /// The alert's event on the feed of the user `user`, about no order.
    func event(user: String, at now: Date) -> NewEvent {
        NewEvent(user: user, type: .securityAlert, order: nil, title: title, body: body, reason: reason, at: now)
    }

    /// The alert's email to `email`.
    func mail(to email: String, at now: Date) -> Mail {
        Mail(to: email, subject: mailSubject, body: mailBody(at: now))
    }
}

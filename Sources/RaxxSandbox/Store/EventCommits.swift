import GRDB

/// Ends the writer's transactions for the event notifier: the users `EventLog` wrote events for
/// are signalled when the transaction commits, and forgotten when it rolls back.
///
/// One observer for the writer's whole life. GRDB drops every cached statement that deletes rows
/// whenever an observer is added or removed; with one observer per event (`afterNextTransaction`)
/// each order prepared its DELETE statements again, and an erasure's chunks theirs after every
/// order.
final class EventCommits: TransactionObserver {
    let notifier: EventNotifier

    init(notifier: EventNotifier) {
        self.notifier = notifier
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) { notifier.transactionEnded(committed: true) }
    func databaseDidRollback(_ db: Database) { notifier.transactionEnded(committed: false) }
}

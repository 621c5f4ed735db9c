import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxOrders
import RaxxTestSupport
import Synchronization
import Testing

@testable import RaxxStore

/// The desk's journal: every order is in it before it is sent, the next one written while the one
/// before is at the server; when an entry cannot be written, nothing more is sent, and what was
/// known but not yet kept is left for reconcile.
@Suite struct OrderDeskJournalTests {
    func intents(_ count: Int) throws -> [OrderIntent] {
        try (1...count).map {
            try OrderIntent(
                line: $0, symbol: "AAPL", side: "buy", qty: .integer(1), type: nil, limitPrice: nil, tif: nil,
                clientOrderID: "c-\($0)", newID: { "unused" })
        }
    }

    /// Whether the journal has an entry for `clientOrderID`, waiting up to 10 s for it (looked for
    /// again at each of the journal's commits): the order written ahead is committed on the
    /// journal's own thread while the one before it is at the (stub) server, whose handler runs on
    /// the desk's lane and may wait for it.
    func entryAppears(_ journal: OrderJournal, _ commits: CommitSignal, _ clientOrderID: String) -> Bool {
        commits.wait(timeout: 10) {
            (try? journal.writer.read { db in
                try Bool.fetchOne(db, sql: "SELECT 1 FROM journal WHERE client_order_id = ?", arguments: [clientOrderID])
            }) == true
        }
    }

    /// A journal in memory, and the signal of its commits.
    func journalWithCommits() throws -> (OrderJournal, CommitSignal) {
        let journal = try OrderJournal.inMemory()
        let commits = CommitSignal()
        journal.writer.add(transactionObserver: commits, extent: .databaseLifetime)
        return (journal, commits)
    }

    /// The next order's entry is written while the order before it is at the server, so that it
    /// goes out as soon as that answer is in; each order is still in the journal before it is sent.
    @Test func theNextOrdersEntryIsWrittenWhileTheOneBeforeIsAtTheServer() async throws {
        let (journal, commits) = try journalWithCommits()
        let api = StubAPI()
        // For each order as it reaches the server: whether it is in the journal, and whether the
        // next one's entry is written while it is there.
        let seen = Mutex<[String: (written: Bool, nextAhead: Bool?)]>([:])
        api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            let id = request.clientOrderId
            let number = try #require(Int(id.dropFirst(2)))
            let written = entryAppears(journal, commits, id)
            let nextAhead = number < 3 ? entryAppears(journal, commits, "c-\(number + 1)") : nil
            seen.withLock { $0[id] = (written, nextAhead) }
            return .created(.init(body: .json(Fixtures.order(clientOrderID: id, status: .filled))))
        }
        let desk = OrderDesk(client: api.api(middlewares: []), journal: journal, accountID: Fixtures.accountID, clock: { Fixtures.now }, deadline: .seconds(10))
        let (results, stop) = await desk.place(try intents(3)) { _, _ in throw RaxxError(code: .internal, message: "no step-up expected") }

        #expect(stop == nil)
        #expect(results.map(\.outcome) == [PlacementResult.Outcome.placed, .placed, .placed])
        let s = seen.withLock { $0 }
        #expect(s["c-1"]?.written == true && s["c-2"]?.written == true && s["c-3"]?.written == true)
        #expect(s["c-1"]?.nextAhead == true && s["c-2"]?.nextAhead == true)
        // Every outcome is kept: nothing is left for reconcile.
        #expect(try journal.unresolved(accountID: Fixtures.accountID).isEmpty)
    }

    @Test func anEntryThatCannotBeWrittenIsNotSentAndStopsTheBatch() async throws {
        let (journal, commits) = try journalWithCommits()
        let api = StubAPI()
        let broken = Mutex(false)
        api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            // Once the first order is at the server and the second one's entry is written (ahead),
            // the journal can no longer be written.
            if !broken.withLock({ $0 }) {
                #expect(entryAppears(journal, commits, "c-2"))
                try journal.writer.write { db in try db.execute(sql: "DROP TABLE journal_history") }
                broken.withLock { $0 = true }
            }
            return .created(.init(body: .json(Fixtures.order(clientOrderID: request.clientOrderId, status: .filled))))
        }
        let desk = OrderDesk(client: api.api(middlewares: []), journal: journal, accountID: Fixtures.accountID, clock: { Fixtures.now }, deadline: .seconds(10))
        let (results, stop) = await desk.place(try intents(3)) { _, _ in throw RaxxError(code: .internal, message: "no step-up expected") }

        #expect(stop?.code == "journal_unwritable")
        // The second order was in the journal before it went out; the third one's entry could not
        // be written, so it was not sent.
        #expect(results.map(\.outcome) == [PlacementResult.Outcome.placed, .placed, .notSent])
        #expect(results[2].error_code == "journal_unwritable")
        #expect(api.operations == ["placeOrder", "placeOrder"])
        // Their answers were to be kept with the third order's entry, which failed, and then on
        // their own, which failed too: they stay for reconcile to look up (where they will be
        // found placed).
        #expect(try journal.unresolved(accountID: Fixtures.accountID).map(\.clientOrderID) == ["c-1", "c-2"])
    }

    /// The server asks for a step-up and this process cannot give it (no terminal, no --pin-fd):
    /// nothing was placed, so the order is rejected, settled in the journal, and the batch stops
    /// with the PIN's own error, not as a lost connection.
    @Test func aStepUpThatCannotBeAskedForRejectsTheOrderAndLeavesNothingUnresolved() async throws {
        let journal = try OrderJournal.inMemory()
        let api = StubAPI()
        api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            let hash = OrderAction(
                clientOrderID: request.clientOrderId, symbol: request.symbol, side: request.side, qty: request.qty,
                type: request._type, limitPrice: request.limitPrice, tif: request.tif, mode: request.mode
            ).hash
            return .default(statusCode: 403, Fixtures.problem(403, code: "step_up_required", actionHash: hash))
        }
        let desk = OrderDesk(client: api.api(middlewares: []), journal: journal, accountID: Fixtures.accountID, clock: { Fixtures.now }, deadline: .seconds(10))
        let (results, stop) = await desk.place(try intents(2)) { _, _ in
            throw RaxxError.usage(
                "A PIN is needed, and there is no terminal to ask for it.", hint: "Run on a terminal, or pass the PIN on a file descriptor: --pin-fd N")
        }
        #expect(stop?.status == .usage && stop?.message == "A PIN is needed, and there is no terminal to ask for it.")
        #expect(results.map(\.outcome) == [PlacementResult.Outcome.rejected, .notSent])
        #expect(results[0].error_code == "usage")
        #expect(results[0].message?.hasPrefix("Not placed: the server asks to confirm this order with your PIN.") == true)
        // One request went out and was answered; the second order was never sent.
        #expect(api.operations == ["placeOrder"])
        // Settled: nothing is left for the next run to warn about or reconcile.
        #expect(try journal.unresolved(accountID: Fixtures.accountID).isEmpty)
    }
}

/// Counts the journal's commits and wakes whoever waits for one: a test waits for the condition
/// it expects, looked at again after each commit, with a bound, instead of sleeping.
final class CommitSignal: TransactionObserver, @unchecked Sendable {
    private let condition = NSCondition()
    private var commits = 0

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidRollback(_ db: Database) {}

    func databaseDidCommit(_ db: Database) {
        condition.lock()
        commits += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Whether `holds` came true within `timeout` seconds. It is asked outside the lock (it may
    /// read the database, whose commits take the lock), after noting the commits seen so far, so
    /// that a commit between the two is not missed.
    func wait(timeout: TimeInterval, until holds: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            condition.lock()
            let seen = commits
            condition.unlock()
            if holds() { return true }
            condition.lock()
            while commits == seen {
                guard condition.wait(until: deadline) else {
                    condition.unlock()
                    return holds()
                }
            }
            condition.unlock()
        }
    }
}

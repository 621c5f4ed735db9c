import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxOrders
@testable import RaxxStore
import RaxxTestSupport
import Testing

/// The desk's journal: when an entry cannot be written, nothing more is sent, and what was known
/// but not yet kept is left for reconcile.
@Suite struct OrderDeskJournalTests {
    func intents(_ count: Int) throws -> [OrderIntent] {
        try (1...count).map {
            try OrderIntent(line: $0, symbol: "AAPL", side: "buy", qty: .integer(1), type: nil, limitPrice: nil, tif: nil,
                            clientOrderID: "c-\($0)", newID: { "unused" })
        }
    }

    @Test func anEntryThatCannotBeWrittenIsNotSentAndStopsTheBatch() async throws {
        let journal = try OrderJournal.inMemory()
        let api = StubAPI()
        api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError.failure("no body") }
            // Once the first order is at the server, the journal can no longer be written.
            try journal.writer.write { db in try db.execute(sql: "DROP TABLE journal_history") }
            return .created(.init(body: .json(Fixtures.order(clientOrderID: request.clientOrderId, status: .filled))))
        }
        let desk = OrderDesk(client: api.api(middlewares: []), journal: journal, accountID: Fixtures.accountID, clock: { Fixtures.now }, deadline: .seconds(10))
        let (results, stop) = await desk.place(try intents(3)) { _, _ in throw RaxxError.failure("no step-up expected") }

        #expect(stop?.code == "journal_unwritable")
        #expect(results.map(\.outcome) == [PlacementResult.Outcome.placed, .notSent, .notSent])
        #expect(results[1].error_code == "journal_unwritable")
        // Only the first order went out.
        #expect(api.operations == ["placeOrder"])
        // Its answer was to be kept with the second order's entry, which failed: it stays for
        // reconcile to look up (where it will be found placed).
        #expect(try journal.unresolved(accountID: Fixtures.accountID).map(\.clientOrderID) == ["c-1"])
    }

    /// The server asks for a step-up and this process cannot give it (no terminal, no --pin-fd):
    /// nothing was placed, so the order is rejected, settled in the journal, and the batch stops
    /// with the PIN's own error, not as a lost connection.
    @Test func aStepUpThatCannotBeAskedForRejectsTheOrderAndLeavesNothingUnresolved() async throws {
        let journal = try OrderJournal.inMemory()
        let api = StubAPI()
        api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError.failure("no body") }
            let hash = OrderAction(clientOrderID: request.clientOrderId, symbol: request.symbol, side: request.side, qty: request.qty,
                                   type: request._type, limitPrice: request.limitPrice, tif: request.tif, mode: request.mode).hash
            return .default(statusCode: 403, Fixtures.problem(403, code: "step_up_required", actionHash: hash))
        }
        let desk = OrderDesk(client: api.api(middlewares: []), journal: journal, accountID: Fixtures.accountID, clock: { Fixtures.now }, deadline: .seconds(10))
        let (results, stop) = await desk.place(try intents(2)) { _, _ in
            throw RaxxError.usage("A PIN is needed, and there is no terminal to ask for it.", hint: "Run on a terminal, or pass the PIN on a file descriptor: --pin-fd N")
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


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
}

import Foundation
import GRDB
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxOrders
import RaxxTestSupport
import RaxxWire
import Testing

@testable import RaxxStore

/// The desk's orders sent as bytes (`rawOrders`), against a loopback listener that answers every
/// request the same way: what is journalled is what went on the wire, and each kind of answer
/// settles the order as the generated client's would.
@Suite struct OrderDeskRawTests {
    let intent = try! OrderIntent(
        line: 1, symbol: "AAPL", side: "buy", qty: .integer(1), type: "limit", limitPrice: .string("187.5"),
        tif: "gtc", clientOrderID: "c-1", newID: { "unused" })

    /// Places `intent` with the listener answering `status` and `body`; answers the results, the
    /// stop, the journal and the listener.
    func place(status: Int, body: String) async throws
        -> (results: [PlacementResult], stop: RaxxError?, journal: OrderJournal, listener: LoopbackListener)
    {
        let listener = try LoopbackListener(.respond(status: status, headers: ["Content-Type": "application/json"], body: body))
        let journal = try OrderJournal.inMemory()
        let configuration = try RaxxConfiguration(environment: ["HOME": "/tmp", "RAXX_API_URL": listener.url])
        // The generated client is only for a step-up's retry: none is expected here.
        var desk = OrderDesk(
            client: StubAPI().api(middlewares: []), journal: journal, accountID: Fixtures.accountID, clock: { Fixtures.now },
            deadline: .seconds(10))
        desk.rawOrders = RaptorClient.makeRaw(tool: "raxx-test", configuration: configuration)
        let (results, stop) = await desk.place([intent]) { _, _ in throw RaxxError(code: .internal, message: "no step-up expected") }
        return (results, stop, journal, listener)
    }

    @Test func aPlacedOrderIsJournalledAsItWasSent() async throws {
        let answer = try JSONLines.line(Fixtures.order(clientOrderID: "c-1", type: .limit, limitPrice: "187.5", status: .open))
        let (results, stop, journal, listener) = try await place(status: 201, body: answer)
        defer { listener.stop() }
        #expect(stop == nil)
        #expect(results.map(\.outcome) == [.placed] && results[0].order_id == "ord-1" && results[0].status == .open)
        let request = try #require(listener.requests.first)
        let sent = try #require(request.components(separatedBy: "\r\n\r\n").last)
        let journalled = try await journal.writer.read { db in try String.fetchOne(db, sql: "SELECT request FROM journal WHERE client_order_id = 'c-1'") }
        #expect(journalled == sent)
        #expect(sent == String(decoding: intent.requestJSON(notAfter: Fixtures.now.addingTimeInterval(10)), as: UTF8.self))
        #expect(try journal.unresolved(accountID: Fixtures.accountID).isEmpty)
    }

    @Test func aProblemRejectsTheOrder() async throws {
        let problem = #"{"title":"Refused.","status":422,"code":"insufficient_buying_power","detail":"Not enough buying power."}"#
        let (results, stop, journal, listener) = try await place(status: 422, body: problem)
        defer { listener.stop() }
        #expect(stop == nil)
        #expect(results.map(\.outcome) == [.rejected])
        #expect(results[0].error_code == "insufficient_buying_power" && results[0].message == "Not enough buying power.")
        #expect(try journal.unresolved(accountID: Fixtures.accountID).isEmpty)
    }

    /// An answer that is not an order: the order may have been placed, so it is left for
    /// reconcile, and the batch stops.
    @Test(arguments: [(201, "{}"), (200, "not json"), (409, "<html>conflict</html>")])
    func anUnreadableAnswerLeavesTheOrderUnknown(status: Int, body: String) async throws {
        let (results, stop, journal, listener) = try await place(status: status, body: body)
        defer { listener.stop() }
        #expect(results.map(\.outcome) == [.unknown])
        #expect(stop?.code == "order_unknown")
        #expect(try journal.unresolved(accountID: Fixtures.accountID).map(\.clientOrderID) == ["c-1"])
    }
}

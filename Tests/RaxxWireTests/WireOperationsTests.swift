import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxWire
import Testing

/// The table of hand-sent operations is the spec's: each entry's path and query names are those
/// of the request the generated client makes for the same operation.
@Suite struct WireOperationsTests {
    /// Records the request and answers 500, which the generated client reads as undocumented.
    final class Recorder: ClientTransport, @unchecked Sendable {
        // @unchecked: written once by the client's task, read after it is awaited.
        var request: HTTPRequest?
        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            self.request = request
            return (HTTPResponse(status: .internalServerError), nil)
        }
    }

    static func sent(_ call: (Client) async throws -> Void) async throws -> (path: String, query: [String]) {
        let recorder = Recorder()
        let client = Client(serverURL: URL(string: "http://127.0.0.1:9")!, configuration: .raxxClient, transport: recorder)
        try? await call(client)
        let target = try #require(recorder.request?.path)
        let components = try #require(URLComponents(string: target))
        return (components.path, components.queryItems?.map(\.name) ?? [])
    }

    @Test func getSyncChangesIsTheGeneratedRequest() async throws {
        let sent = try await Self.sent { _ = try await $0.getSyncChanges(query: .init(cursor: 1, limit: 2, rebuild: true)) }
        #expect(sent.path == WireOperations.getSyncChanges.path)
        #expect(sent.query == WireOperations.getSyncChanges.query)
        #expect(WireOperations.getSyncChanges.id == Operations.GetSyncChanges.id)
    }

    @Test func placeOrderIsTheGeneratedRequest() async throws {
        let order = Components.Schemas.OrderRequest(
            clientOrderId: "c", symbol: "AAPL", side: .buy, qty: 1, _type: .market, tif: .day,
            notAfter: Date(timeIntervalSince1970: 0), mode: .paper)
        let sent = try await Self.sent { _ = try await $0.placeOrder(body: .json(order)) }
        #expect(sent.path == WireOperations.placeOrder.path)
        #expect(sent.query == WireOperations.placeOrder.query)
    }

    @Test func getPortfolioIsTheGeneratedRequest() async throws {
        let sent = try await Self.sent { _ = try await $0.getPortfolio() }
        #expect(sent.path == WireOperations.getPortfolio.path)
        #expect(sent.query == WireOperations.getPortfolio.query)
        #expect(WireOperations.getPortfolio.id == Operations.GetPortfolio.id)
    }
}

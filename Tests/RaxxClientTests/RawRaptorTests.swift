import Foundation
import HTTPTypes
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxTestSupport
import RaxxWire
import Testing

/// Requests whose bodies go and come as bytes, against a loopback listener.
@Suite struct RawRaptorTests {
    func configuration(_ listener: LoopbackListener) throws -> RaxxConfiguration {
        try RaxxConfiguration(environment: ["HOME": "/tmp", "RAXX_API_URL": listener.url])
    }

    func header(_ name: String, in request: String) -> String? {
        request.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ": ") }
            .map { String($0.dropFirst(name.count + 2)) }
    }

    /// Any status comes back with its body (the caller reads its own answers), and the request
    /// carries the bytes as given, with the generated client's Content-Type and Accept.
    @Test(arguments: [201, 422])
    func aPostAnswersItsStatusAndBody(status: Int) async throws {
        let listener = try LoopbackListener(.respond(status: status, headers: ["Content-Type": "application/json"], body: #"{"a":1}"#))
        defer { listener.stop() }
        let raw = RaptorClient.makeRaw(tool: "raxx-test", configuration: try configuration(listener))
        let (answered, body) = try await raw.post(WireOperations.placeOrder, json: Array(#"{"qty":1}"#.utf8))
        #expect(answered.code == status)
        #expect(String(decoding: body, as: UTF8.self) == #"{"a":1}"#)
        let request = try #require(listener.requests.first)
        #expect(request.hasPrefix("POST /api/orders HTTP/1.1\r\n"))
        #expect(request.hasSuffix("\r\n\r\n{\"qty\":1}"))
        #expect(header("Content-Type", in: request) == "application/json; charset=utf-8")
        #expect(header("Accept", in: request) == "application/json, application/problem+json")
    }

    /// The generated client and the raw one on one transport: the same Accept for the same
    /// operation, and one connection between them.
    @Test func sharesTheGeneratedClientsConnectionAndAccept() async throws {
        let listener = try LoopbackListener(.respond(status: 201, headers: ["Content-Type": "application/json"], body: "{}"))
        defer { listener.stop() }
        let configuration = try configuration(listener)
        let transport = RaptorClient.transport(tool: "raxx-test", configuration: configuration)
        let client = RaptorClient.make(tool: "raxx-test", configuration: configuration, transport: transport)
        let raw = RaptorClient.makeRaw(tool: "raxx-test", configuration: configuration, transport: transport)
        let body = Components.Schemas.OrderRequest(
            clientOrderId: "c1", symbol: "AAPL", side: .buy, qty: 1, _type: .market, tif: .day,
            notAfter: Date(timeIntervalSince1970: 1_795_000_000), mode: .paper)
        // "{}" is no order: the generated client refuses the answer, after sending the request.
        _ = try? await client.placeOrder(body: .json(body))
        _ = try await raw.post(WireOperations.placeOrder, json: Array("{}".utf8))
        #expect(listener.requests.count == 2)
        #expect(listener.connections == 1)
        let accepts = listener.requests.map { header("Accept", in: $0) }
        #expect(accepts[0] != nil && accepts[0] == accepts[1])
    }
}

import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxCore
import RaxxTestSupport
import RaxxWire
import Testing

@testable import RaxxClient
@testable import RaxxSandbox

/// Every answer has a ceiling (`AnswerCeiling`): past it the transport stops reading, whether the
/// answer said its length or came chunked, and the command is told the answer was too large.
@Suite struct AnswerCeilingTests {
    let transport = CurlTransport(options: .init(connectTimeout: .seconds(2), totalTimeout: .seconds(120), userAgent: "raxx-test/0.1.0"))

    /// A sync page as JSON: its fields, one change repeated, the last change.
    static let change =
        #"{"entity":"position","id":"pos_1","op":"upsert","#
        + #""position":{"avg_price":"187.25","id":"pos_1","qty":10,"symbol":"AAPL","updated_at":"2026-01-02T03:04:05Z"},"seq":1}"#
    static let page = LoopbackListener.StreamedBody(
        head: #"{"as_of":"2026-01-02T03:04:05Z","cursor":1,"has_more":false,"reset":false,"changes":["#,
        filler: change + ",", tail: change + "]}")

    static func listener(bytes: Int, chunked: Bool) throws -> LoopbackListener {
        try LoopbackListener(.stream(status: 200, headers: ["Content-Type": "application/json"], body: page, bytes: bytes, chunked: chunked))
    }

    /// GETs a page as `operationID`; answers how many bytes of body came back.
    func get(_ listener: LoopbackListener, as operationID: String) async throws -> Int {
        let (_, body) = try await transport.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/api/sync"), body: nil,
            baseURL: URL(string: listener.url)!, operationID: operationID)
        var count = 0
        if let body { for try await chunk in body { count += chunk.count } }
        return count
    }

    /// Twice the ceiling, said in a Content-Length (refused before the body is read) or chunked
    /// (stopped once past the ceiling): the server never gets to send it all.
    @Test(arguments: [Operations.GetPortfolio.id, Operations.GetSyncChanges.id], [false, true])
    func anAnswerPastItsCeilingIsStoppedNotRead(operationID: String, chunked: Bool) async throws {
        let bytes = 2 * AnswerCeiling.bytes(for: operationID)
        let listener = try Self.listener(bytes: bytes, chunked: chunked)
        defer { listener.stop() }
        let failure = await #expect(throws: TransportFailure.self) { try await get(listener, as: operationID) }
        #expect(failure?.kind == .tooLarge, "\(failure.map { "\($0)" } ?? "no failure")")
        #expect(failure.map { ErrorMapping.raxxError(from: $0) } == .answerTooLarge)
        try await waitUntil { listener.streamsEnded == 1 }
        #expect(listener.streamedBytes < bytes, "the whole answer was read")
    }

    /// A sync page may be far larger than any other answer: what passes for one is too large for another.
    @Test func eachOperationHasItsOwnCeiling() async throws {
        #expect(AnswerCeiling.bytes(for: Operations.GetSyncChanges.id) == AnswerCeiling.syncPage)
        #expect(AnswerCeiling.bytes(for: Operations.ExportDSRData.id) == AnswerCeiling.export)
        #expect(AnswerCeiling.bytes(for: Operations.ListOrders.id) == AnswerCeiling.other)
        let bytes = 2 * AnswerCeiling.other
        let page = try Self.listener(bytes: bytes, chunked: true)
        defer { page.stop() }
        let read = try await get(page, as: Operations.GetSyncChanges.id)
        #expect(read > AnswerCeiling.other && read <= bytes)
        await #expect(throws: TransportFailure.self) { try await get(page, as: Operations.GetPortfolio.id) }
    }

    /// The raw path the cache's refresh reads its pages by fails the same way, as the error a person sees.
    @Test func aRawSyncPagePastItsCeilingIsTheAnswerTooLarge() async throws {
        let listener = try Self.listener(bytes: AnswerCeiling.syncPage + (1 << 20), chunked: true)
        defer { listener.stop() }
        let raw = RaptorClient.makeRaw(
            tool: "raxx-test",
            configuration: try RaxxConfiguration(environment: ["HOME": "/tmp", "RAXX_API_URL": listener.url]))
        let error = await #expect(throws: (any Error).self) { try await raw.get(WireOperations.getSyncChanges, ["0", "5000", "false"]) }
        let mapped = error.map { ErrorMapping.raxxError(from: $0) }
        #expect(mapped == .answerTooLarge)
        #expect(mapped?.status == .unavailable)
        #expect(mapped?.message == "The server's answer was too large to read.")
    }

    /// The sync page's ceiling comes from the spec: its most changes a page is the spec's bound on
    /// `limit`, and its largest change, every field written out at its widest, fits the room given.
    @Test func theSyncPagesCeilingIsTheSpecsLargestPage() throws {
        let limit = try #require(SpecBounds.table[Operations.GetSyncChanges.id]?.first { $0.field == ["limit"] })
        #expect(limit.range.upperBound == Int64(AnswerCeiling.mostChangesPerPage))

        let id = String(repeating: "o", count: 64), decimal = "-" + String(repeating: "9", count: 18) + ".9999"
        let date = "2026-12-31T23:59:59.999999Z"
        let order =
            #"{"avg_fill_price":"\#(decimal)","client_order_id":"\#(String(repeating: "c", count: 64))","created_at":"\#(date)","#
            + #""filled_qty":\#(Int64.min),"id":"\#(id)","limit_price":"\#(decimal)","mode":"paper","not_after":"\#(date)","qty":\#(Int64.min),"#
            + #""reject_code":"\#(String(repeating: "r", count: 32))","side":"sell","status":"partially_filled","#
            + #""symbol":"\#(String(repeating: "S", count: 32))","tif":"day","type":"market","updated_at":"\#(date)"}"#
        let change = #"{"entity":"order","id":"\#(id)","op":"upsert","order":\#(order),"seq":\#(Int64.max)}"#
        let decoded = try SyncPageReader.decode(Array((Self.page.head + change + "]}").utf8))
        #expect(decoded.changes.first?.order?.clientOrderId.count == 64)
        #expect(change.utf8.count == 749)
        #expect(change.utf8.count + 1 <= AnswerCeiling.largestChange)  // with the comma between changes
        #expect(AnswerCeiling.syncPage == 40_960_000)
    }
}

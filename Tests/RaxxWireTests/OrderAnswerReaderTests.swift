import Foundation
import RaxxAPI
import Testing

@testable import RaxxWire

/// An order answer reads the same through the fast reader as through the generated decoder, and
/// what the fast reader does not take is left to the decoder, which takes or refuses it.
@Suite struct OrderAnswerReaderTests {
    func decoded(_ json: String) throws -> Components.Schemas.Order {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            try RFC3339DateTranscoder().decode(try decoder.singleValueContainer().decode(String.self))
        }
        return try decoder.decode(Components.Schemas.Order.self, from: Data(json.utf8))
    }

    static let full = """
        {"avg_fill_price":"187.25","client_order_id":"c-1","created_at":"2026-11-24T03:00:00.125Z","filled_qty":10,\
        "id":"ord_1","limit_price":"190","mode":"paper","not_after":"2026-11-24T03:00:10Z","qty":10,"reject_code":null,\
        "side":"buy","status":"filled","symbol":"AAPL","tif":"day","type":"limit","updated_at":"2026-11-24T03:00:00.5Z"}
        """

    @Test(arguments: [
        full,
        // Only the required fields, in another order, with spaces and an unknown key.
        """
         { "updated_at" : "2026-11-24T03:00:00Z", "id":"ord_2", "client_order_id":"c-2", "symbol":"AAPL261218C00190000",
           "side":"sell", "qty":1, "type":"market", "tif":"gtc", "status":"rejected", "filled_qty":0, "mode":"paper",
           "created_at":"2026-11-24T03:00:00Z", "extra": {"a": [1, 2.5e3, "x\\"y"]} }\n
        """,
        #"""
        {"id":"ord_3","client_order_id":"c-3","symbol":"MSFT","side":"buy","qty":5,"type":"market","tif":"day","status":"open","filled_qty":0,\#
        "mode":"paper","created_at":"2026-11-24T03:00:00Z","updated_at":"2026-11-24T03:00:00Z","reject_code":"insufficient_buying_power",\#
        "limit_price":null,"avg_fill_price":null,"not_after":null}
        """#,
    ])
    func readsAsTheDecoderDoes(_ json: String) throws {
        let expected = try decoded(json)
        let fast = try Array(json.utf8).withUnsafeBytes { try OrderAnswerReader.fast($0) }
        #expect(fast == expected)
        #expect(try OrderAnswerReader.order(Array(json.utf8)) == expected)
    }

    /// An escape in a string: not the fast reader's, the decoder's, with the same result.
    @Test func leavesEscapesToTheDecoder() throws {
        let json = Self.full.replacingOccurrences(of: #""reject_code":null"#, with: #""reject_code":"a\u0020\"b""#)
        #expect(throws: SyncPageReader.Unsupported.self) { try Array(json.utf8).withUnsafeBytes { try OrderAnswerReader.fast($0) } }
        let order = try OrderAnswerReader.order(Array(json.utf8))
        #expect(order == (try decoded(json)))
        #expect(order.rejectCode == "a \"b")
    }

    /// What neither reader takes is refused as the generated client refuses it (a DecodingError).
    @Test(arguments: [
        Self.full.replacingOccurrences(of: #""id":"ord_1","#, with: ""),
        Self.full.replacingOccurrences(of: #""status":"filled""#, with: #""status":"lost""#),
        Self.full + " x",
        String(Self.full.dropLast()),
        "",
    ])
    func refusesWhatTheDecoderRefuses(_ json: String) {
        #expect(throws: DecodingError.self) { try OrderAnswerReader.order(Array(json.utf8)) }
    }

    /// A key given twice: not the fast reader's; the decoder keeps the first value.
    @Test func leavesADuplicatedKeyToTheDecoder() throws {
        let json = Self.full.replacingOccurrences(of: #""status":"filled""#, with: #""status":"filled","status":"rejected""#)
        #expect(throws: SyncPageReader.Unsupported.self) { try Array(json.utf8).withUnsafeBytes { try OrderAnswerReader.fast($0) } }
        #expect(try OrderAnswerReader.order(Array(json.utf8)) == (try decoded(json)))
    }

    /// An unknown value nested deeper than the fast reader follows is the decoder's: taken when it
    /// is within the decoder's limit, refused past it; no stack is exhausted either way.
    @Test(arguments: [100, 100_000])
    func leavesDeepNestingToTheDecoder(depth: Int) throws {
        let json = Self.full.replacingOccurrences(
            of: #""mode":"paper""#,
            with: #""mode":"paper","x":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        #expect(throws: SyncPageReader.Unsupported.self) { try Array(json.utf8).withUnsafeBytes { try OrderAnswerReader.fast($0) } }
        if depth < 512 {
            #expect(try OrderAnswerReader.order(Array(json.utf8)) == (try decoded(Self.full)))
        } else {
            #expect(throws: DecodingError.self) { try OrderAnswerReader.order(Array(json.utf8)) }
        }
    }
}

import Foundation
import PropertyBased
import RaxxAPI
import RaxxCore
import RaxxTestSupport
import Testing

@testable import RaxxWire

/// A portfolio answer reads the same through the fast reader as through the generated decoder,
/// and what the fast reader does not take is left to the decoder, which takes or refuses it.
@Suite struct PortfolioAnswerReaderTests {
    /// The answer as Raptor writes it (indented, keys sorted), or compact.
    static func answer(_ p: Components.Schemas.Portfolio, pretty: Bool) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, e in
            var c = e.singleValueContainer()
            try c.encode(RFC3339.string(from: date))
        }
        return String(decoding: try! encoder.encode(p), as: UTF8.self)
    }

    static func decoded(_ json: String) throws -> Components.Schemas.Portfolio {
        try WireJSON.decoder().decode(Components.Schemas.Portfolio.self, from: Data(json.utf8))
    }

    static func fast(_ json: String) throws -> Components.Schemas.Portfolio {
        try Array(json.utf8).withUnsafeBytes { try PortfolioAnswerReader.fast($0) }
    }

    @Test func generatedAnswersReadAsTheDecoderReadsThem() async throws {
        await propertyCheck(count: 500, input: Gen.uint64()) { seed in
            var random = ModelRandom(seed)
            var p = Fixtures.portfolio(at: random.date())
            p.cash = random.money()
            p.unrealizedPnl = random.money()
            p.mode = random.pick(Components.Schemas.TradingMode.allCases)
            p.positionsCount = random.int(0...100_000)
            let symbols = ["AAPL", "MSFT", "AAPL261218C00190000", "BRK.B", "é\"\\x", random.text(0...12)]
            p.marks = random.int(0...5) == 0 ? nil : (0..<random.int(0...30)).map { _ in .init(symbol: random.pick(symbols), price: random.money()) }
            let json = Self.answer(p, pretty: random.bool())
            #expect(try! PortfolioAnswerReader.portfolio(Array(json.utf8)) == p, "\(json)")
            if let fast = try? Self.fast(json) { #expect(fast == p, "\(json)") }
        }
    }

    /// Raptor's answer, with a mark for each position, is the fast reader's (no fallback).
    @Test func theUsualAnswerIsReadDirectly() throws {
        var p = Fixtures.portfolio()
        p.marks = (0..<1_000).map { .init(symbol: $0.isMultiple(of: 2) ? "AAPL" : "AAPL261218C00190000", price: "\($0).25") }
        for pretty in [true, false] {
            #expect(try Self.fast(Self.answer(p, pretty: pretty)) == p)
        }
    }

    static let good = answer(Fixtures.portfolio(), pretty: true)

    /// Escapes, a key twice, an unknown key, null marks: not all the fast reader's; read as the
    /// decoder reads them either way.
    @Test(arguments: [
        good.replacingOccurrences(of: #""symbol" : "AAPL""#, with: #""symbol" : "A\u0041PL""#),
        good.replacingOccurrences(of: #""cash" : "90000.00""#, with: #""cash" : "90000.00", "cash" : "1.00""#),
        good.replacingOccurrences(of: #""price" : "190.00""#, with: #""price" : "190.00", "extra" : [1, {"a": null}]"#),
        good.replacingOccurrences(of: #"(?s)"marks" : \[.*?\]"#, with: #""marks" : null"#, options: .regularExpression),
        answer(
            {
                var p = Fixtures.portfolio()
                p.marks = nil
                return p
            }(), pretty: true),
        // A trailing comma, which JSONDecoder takes.
        good.replacingOccurrences(of: #""symbol" : "AAPL""#, with: #""symbol" : "AAPL","#),
    ])
    func readsWhatItLeavesAsTheDecoderDoes(_ json: String) throws {
        #expect(try PortfolioAnswerReader.portfolio(Array(json.utf8)) == (try Self.decoded(json)), "\(json)")
    }

    /// What neither reader takes is refused as the generated client refuses it (a DecodingError).
    @Test(arguments: [
        good.replacingOccurrences(of: #""price" : "190.00""#, with: #""price" : 190"#),
        good.replacingOccurrences(of: #""price" : "190.00""#, with: ""),
        good.replacingOccurrences(of: #""symbol" : "AAPL""#, with: #""symbol" : null"#),
        good.replacingOccurrences(of: #""mode" : "paper""#, with: #""mode" : "margin""#),
        good.replacingOccurrences(of: #""account_id" : "acc-1","#, with: ""),
        good.replacingOccurrences(of: #"(?s)"marks" : \[.*?\]"#, with: #""marks" : ["AAPL"]"#, options: .regularExpression),
        good + " x", String(good.dropLast()), "",
    ])
    func refusesWhatTheDecoderRefuses(_ json: String) {
        #expect(throws: DecodingError.self) { try Self.decoded(json) }
        #expect(throws: DecodingError.self) { try PortfolioAnswerReader.portfolio(Array(json.utf8)) }
    }
}

import Foundation
import RaxxAPI

/// Reads the portfolio snapshot as Raptor answers it (the body of `GET /api/portfolio`) straight
/// from its bytes, with the sync pages' reader. Every refresh reads one, with a mark for each
/// position: for 10,000 positions JSONDecoder spent three quarters of a delta refresh's
/// instructions on them.
///
/// What that reader leaves alone (an escape in a string, a key twice, an unknown mode, …) is
/// decoded by the generated types instead, which accept or refuse it exactly as the generated
/// client does: so an answer reads the same whichever way it was read.
public enum PortfolioAnswerReader {
    public static func portfolio(_ bytes: [UInt8]) throws -> Components.Schemas.Portfolio { try WireJSON.read(bytes, fast: fast) }

    /// The portfolio, or `SyncPageReader.Unsupported` for anything the reader does not take.
    static func fast(_ buffer: UnsafeRawBufferPointer) throws -> Components.Schemas.Portfolio {
        typealias K = WireKeys.Portfolio
        typealias Reader = SyncPageReader.Reader
        func once<T>(_ slot: inout T?, _ value: T, _ r: Reader) throws { try SyncPageReader.once(&slot, value, r) }
        var r = Reader(buffer)
        var accountID: Range<Int>?, asOf: Date?, mode: Range<Int>?, positionsCount: Int64?, marks: [Components.Schemas.Mark]??
        var cash: Range<Int>?, marketValue: Range<Int>?, equity: Range<Int>?, buyingPower: Range<Int>?, unrealizedPnl: Range<Int>?
        try r.object { r, key in
            switch key {
            case K.accountID: try once(&accountID, r.string(), r)
            case K.asOf: try once(&asOf, r.dateValue(), r)
            case K.buyingPower: try once(&buyingPower, r.string(), r)
            case K.cash: try once(&cash, r.string(), r)
            case K.equity: try once(&equity, r.string(), r)
            case K.marketValue: try once(&marketValue, r.string(), r)
            case K.marks: try once(&marks, r.nullable { try Self.marks(&$0) }, r)
            case K.mode: try once(&mode, r.member(of: SyncPageReader.Enums.mode), r)
            case K.positionsCount: try once(&positionsCount, r.int64(), r)
            case K.unrealizedPnl: try once(&unrealizedPnl, r.string(), r)
            default: try r.skipValue()
            }
        }
        r.skipWhitespace()
        guard r.i == r.end else { throw r.unsupported("text after the portfolio") }
        guard let accountID, let asOf, let mode, let positionsCount, let cash, let marketValue, let equity, let buyingPower,
            let unrealizedPnl, let tradingMode = Components.Schemas.TradingMode(rawValue: r.string(mode)),
            let count = Int(exactly: positionsCount)
        else { throw r.unsupported("a portfolio field is missing") }
        return Components.Schemas.Portfolio(
            accountId: r.string(accountID), asOf: asOf, mode: tradingMode, cash: r.string(cash), marketValue: r.string(marketValue),
            equity: r.string(equity), buyingPower: r.string(buyingPower), unrealizedPnl: r.string(unrealizedPnl), positionsCount: count,
            marks: marks ?? nil)
    }

    static func marks(_ r: inout SyncPageReader.Reader) throws -> [Components.Schemas.Mark] {
        var marks: [Components.Schemas.Mark] = []
        try r.array { r in
            var symbol: Range<Int>?, price: Range<Int>?
            try r.object { r, key in
                switch key {
                case WireKeys.Mark.symbol: try SyncPageReader.once(&symbol, r.string(), r)
                case WireKeys.Mark.price: try SyncPageReader.once(&price, r.string(), r)
                default: try r.skipValue()
                }
            }
            guard let symbol, let price else { throw r.unsupported("a mark field is missing") }
            marks.append(Components.Schemas.Mark(symbol: r.string(symbol), price: r.string(price)))
        }
        return marks
    }
}

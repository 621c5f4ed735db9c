import RaxxWire

/// What a holding is worth at a price and what it has made: the one computation behind every
/// market value and unrealised P&L a tool shows, in ticks (`Money`).
public struct Valuation: Sendable, Equatable {
    /// Quantity × price × the instrument's multiplier (negative for a short position).
    public var marketValueTicks: Int64
    /// Quantity × (price − average price) × multiplier.
    public var unrealizedTicks: Int64
    /// The cost basis: |quantity × average price × multiplier|.
    public var costTicks: Int64

    /// Nil when the figures do not fit in 64 bits (no real holding comes near).
    public init?(qty: Int64, averagePriceTicks: Int64, priceTicks: Int64, multiplier: Int64) {
        func product(_ values: Int64...) -> Int64? {
            var result: Int64 = 1
            for v in values {
                let (p, overflow) = result.multipliedReportingOverflow(by: v)
                if overflow { return nil }
                result = p
            }
            return result
        }
        let (move, overflow) = priceTicks.subtractingReportingOverflow(averagePriceTicks)
        guard !overflow, let value = product(qty, priceTicks, multiplier), let pnl = product(qty, move, multiplier),
            let cost = product(qty, averagePriceTicks, multiplier), cost != .min
        else { return nil }
        marketValueTicks = value
        unrealizedTicks = pnl
        costTicks = cost.magnitude > UInt64(Int64.max) ? .max : abs(cost)
    }

    /// A holding valued from its prices as decimal text (UTF-8: a column's, read in place, or a
    /// String's); nil when either price is not a decimal or the figures do not fit.
    @inlinable
    public init?<Price: Sequence<UInt8>>(qty: Int64, averagePrice: Price, price: Price, multiplier: Int64) {
        guard let average = Money.ticks(parsingUTF8: averagePrice), let ticks = Money.ticks(parsingUTF8: price) else { return nil }
        self.init(qty: qty, averagePriceTicks: average, priceTicks: ticks, multiplier: multiplier)
    }

    public init(marketValueTicks: Int64, unrealizedTicks: Int64, costTicks: Int64) {
        self.marketValueTicks = marketValueTicks
        self.unrealizedTicks = unrealizedTicks
        self.costTicks = costTicks
    }

    /// The unrealised P&L in per cent of the cost basis; nil when the basis is zero.
    public var percent: Double? { Self.percent(unrealizedTicks, of: costTicks) }

    /// `pnl` in per cent of `cost`; nil when `cost` is zero.
    public static func percent(_ pnl: Int64, of cost: Int64) -> Double? {
        cost == 0 ? nil : Double(pnl) / Double(cost.magnitude) * 100
    }
}

extension InstrumentSymbol {
    /// Shares per unit: 100 for an option contract, 1 for a share.
    public var multiplier: Int64 {
        switch self {
        case .equity: 1
        case .option: 100
        }
    }
}

extension Money {
    /// Money of an account (cash, value, P&L) to the cent, rounded half away from zero: "1.09",
    /// "-12.35", "0.00".
    public static func cents(ticks: Int64) -> String {
        var out: [UInt8] = []
        append(centsOf: ticks, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends what `cents(ticks:)` answers, as UTF-8, to `out` (output paths call this per row).
    public static func append(centsOf ticks: Int64, to out: inout [UInt8]) {
        let perCent = ticksPerUnit / 100
        let (q, r) = ticks.quotientAndRemainder(dividingBy: perCent)
        let rounded = r.magnitude * 2 >= UInt64(perCent) ? q + (ticks < 0 ? -1 : 1) : q
        if rounded < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = rounded.magnitude
        RFC3339.appendDigits(Int64(magnitude / 100), to: &out)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(ascii: "0") + UInt8(magnitude % 100 / 10))
        out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
    }

    /// A decimal string of money to the cent (see `cents(ticks:)`); text that is not a decimal
    /// number is kept as it is.
    public static func cents(_ text: String) -> String {
        ticks(parsing: text).map(cents(ticks:)) ?? text
    }
}

/// An option symbol's parts as JSON sits beside the OCC symbol itself: the `option` object of a
/// position, fill or order, keys sorted (`{"expiry":"2026-12-18","multiplier":100,"right":"call",
/// "strike":"190.00","underlying":"AAPL"}`).
public enum OptionJSON {
    /// The object for `symbol`; nil when it is not an option contract.
    public static func object(_ symbol: String) -> String? {
        guard case .option(let c) = InstrumentSymbol(parsing: symbol) else { return nil }
        var out: [UInt8] = []
        append(c, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the object for `contract` to `out`, as UTF-8 (output paths call this per row).
    public static func append(_ contract: OptionContract, to out: inout [UInt8]) {
        let day = contract.expiry
        out += #"{"expiry":""#.utf8
        RFC3339.appendDigits(Int64(day.year), width: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        RFC3339.appendDigits(Int64(day.month), width: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        RFC3339.appendDigits(Int64(day.day), width: 2, to: &out)
        out += #"","multiplier":"#.utf8
        RFC3339.appendDigits(InstrumentSymbol.option(contract).multiplier, to: &out)
        out += (contract.right == .call ? #","right":"call","strike":""# : #","right":"put","strike":""#).utf8
        Money.append(ticks: contract.strikeThousandths * (Money.ticksPerUnit / 1000), to: &out)
        out += #"","underlying":""#.utf8
        out += contract.underlying.utf8
        out += #""}"#.utf8
    }
}

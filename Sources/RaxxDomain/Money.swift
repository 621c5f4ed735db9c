/// Money as fixed-point decimals: integer ticks of 1/10,000 of a currency unit, so sums are exact
/// and nothing goes through binary floating point.
public enum Money {
    public static let ticksPerUnit: Int64 = 10_000

    /// "187.25", "0.05", "-12.3456": at least two decimals, at most four.
    public static func string(ticks: Int64) -> String {
        let negative = ticks < 0
        let magnitude = ticks.magnitude
        let units = magnitude / UInt64(ticksPerUnit)
        var fraction = String(magnitude % UInt64(ticksPerUnit))
        fraction = String(repeating: "0", count: 4 - fraction.count) + fraction
        while fraction.count > 2, fraction.hasSuffix("0") { fraction.removeLast() }
        return (negative ? "-" : "") + "\(units).\(fraction)"
    }

    /// Appends what `string(ticks:)` answers, as UTF-8, to `out` (no String made: output paths
    /// call this per row).
    public static func append(ticks: Int64, to out: inout [UInt8]) {
        if ticks < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = ticks.magnitude
        var units = magnitude / UInt64(ticksPerUnit)
        var fraction = magnitude % UInt64(ticksPerUnit)
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { d in
            var count = 0
            repeat {
                d[19 - count] = 48 + UInt8(units % 10)
                units /= 10
                count += 1
            } while units > 0
            out.append(contentsOf: d[(20 - count)...])
        }
        out.append(UInt8(ascii: "."))
        // Four decimals, trailing zeros dropped down to two.
        var kept = 4
        while kept > 2, fraction % 10 == 0 { fraction /= 10; kept -= 1 }
        var divisor: UInt64 = 1
        for _ in 1..<kept { divisor *= 10 }
        while divisor > 0 {
            out.append(48 + UInt8(fraction / divisor % 10))
            divisor /= 10
        }
    }

    /// Parses a decimal string with at most four decimals (and at most twelve whole digits); nil
    /// when it is not one. Over the bytes: it runs for every row a read shows.
    public static func ticks(parsing text: String) -> Int64? { ticks(parsingUTF8: text.utf8) }

    /// `ticks(parsing:)` of UTF-8 bytes (a column's text, read in place). Inlinable so that a
    /// caller's byte buffer gets its own specialisation, not the generic one.
    @inlinable
    public static func ticks<Bytes: Sequence<UInt8>>(parsingUTF8 bytes: Bytes) -> Int64? {
        var whole: Int64 = 0, wholeDigits = 0, fraction: Int64 = 0, fractionDigits = 0
        var negative = false, point = false, first = true
        for b in bytes {
            defer { first = false }
            switch b {
            case UInt8(ascii: "-") where first: negative = true
            case UInt8(ascii: ".") where !point && wholeDigits > 0: point = true
            case UInt8(ascii: "0")...UInt8(ascii: "9") where point:
                fractionDigits += 1
                guard fractionDigits <= 4 else { return nil }
                fraction = fraction * 10 + Int64(b - UInt8(ascii: "0"))
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                wholeDigits += 1
                guard wholeDigits <= 12 else { return nil }
                whole = whole * 10 + Int64(b - UInt8(ascii: "0"))
            default: return nil
            }
        }
        guard wholeDigits > 0, !point || fractionDigits > 0 else { return nil }
        for _ in fractionDigits..<4 { fraction *= 10 }
        let ticks = whole * ticksPerUnit + fraction
        return negative ? -ticks : ticks
    }

    /// A price an order may carry: positive, at most nine whole digits and four decimals.
    public static func priceTicks(parsing text: String) -> Int64? {
        guard !text.hasPrefix("-"), let whole = text.split(separator: ".", omittingEmptySubsequences: false).first,
            whole.count <= 9, let ticks = ticks(parsing: text), ticks > 0
        else { return nil }
        return ticks
    }

    /// Rounds a price to whole cents, in ticks.
    public static func ticks(roundingToCents value: Double) -> Int64 {
        Int64((value * 100).rounded()) * (ticksPerUnit / 100)
    }
}

/// The tick an instrument's prices are quoted in, and so the decimals a price is shown with.
public enum PriceTick {
    /// Stocks from $1 and every option trade in whole cents (options' ticks, $0.01 to $0.10, are
    /// all whole cents); a stock under $1 in hundredths of a cent (Reg NMS Rule 612's sub-penny
    /// exception).
    public static func decimals(of symbol: InstrumentSymbol, atTicks price: Int64) -> Int {
        switch symbol {
        case .equity: price.magnitude < UInt64(Money.ticksPerUnit) ? 4 : 2
        case .option: 2
        }
    }

    /// The decimals to show `price` (a decimal string) of `symbol` with; a symbol or price that
    /// does not parse shows in cents.
    public static func decimals(symbol: String, price: String) -> Int {
        guard let instrument = InstrumentSymbol(parsing: symbol), let ticks = Money.ticks(parsing: price) else { return 2 }
        return decimals(of: instrument, atTicks: ticks)
    }
}

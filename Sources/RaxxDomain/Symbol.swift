import Foundation

/// What an order or a position names: a stock ticker or an option contract in OCC symbology.
/// There is one parser for both, shared by the tools and the sandbox.
public enum InstrumentSymbol: Sendable, Hashable, CustomStringConvertible {
    /// 1–6 letters with an optional one-letter class suffix (`AAPL`, `BRK.B`).
    case equity(String)
    case option(OptionContract)

    /// Parses a ticker or an OCC option symbol (compact or space-padded, any letter case); nil when
    /// `text` is neither.
    public init?(parsing text: String) {
        if let ticker = Self.ticker(text) {
            self = .equity(ticker)
        } else if let contract = OptionContract(occ: text) {
            self = .option(contract)
        } else {
            return nil
        }
    }

    /// The canonical spelling: upper case, options in compact OCC form.
    public var description: String {
        switch self {
        case .equity(let ticker): ticker
        case .option(let contract): contract.symbol
        }
    }

    /// The underlying's ticker.
    public var underlying: String {
        switch self {
        case .equity(let ticker): ticker
        case .option(let contract): contract.underlying
        }
    }

    /// The ticker `text` spells in upper case, or nil: 1–6 ASCII letters, then optionally a dot and
    /// one letter. Over the bytes, as `OptionContract(occ:)` is.
    private static func ticker(_ text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8)
        var root = 0, suffix = -1
        for b in text.utf8 {
            let upper = b >= 0x61 && b <= 0x7A ? b - 0x20 : b  // ASCII upper case
            if upper == UInt8(ascii: "."), suffix < 0, root > 0 {
                suffix = 0
            } else if upper >= 0x41 && upper <= 0x5A, suffix < 0 ? root < 6 : suffix < 1 {
                if suffix < 0 { root += 1 } else { suffix += 1 }
            } else {
                return nil
            }
            bytes.append(upper)
        }
        guard root > 0, suffix != 0 else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// An option contract in OCC symbology: root, expiry YYMMDD, C or P, strike × 1000 in 8 digits.
/// Written compactly (`AAPL261218C00190000`); the padded form (`AAPL  261218C00190000`) is read too.
public struct OptionContract: Sendable, Hashable {
    public enum Right: String, Sendable { case call = "C", put = "P" }

    public var underlying: String
    public var expiry: CalendarDay
    public var right: Right
    public var strikeThousandths: Int64

    public init(underlying: String, expiry: CalendarDay, right: Right, strikeThousandths: Int64) {
        self.underlying = underlying
        self.expiry = expiry
        self.right = right
        self.strikeThousandths = strikeThousandths
    }

    public init?(occ text: String) { self.init(occUTF8: text.utf8) }

    /// Parses UTF-8 bytes (a column's text, read in place: it runs for every row a read shows).
    /// Inlinable so that a caller's byte buffer gets its own specialisation; the bytes are
    /// normalised on the stack.
    @inlinable
    public init?<Text: Sequence<UInt8>>(occUTF8 text: Text) {
        let parsed = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { buffer -> OptionContract? in
            var count = 0
            for b in text where b != 0x20 {
                guard count < 21 else { return nil }
                buffer[count] = b >= 0x61 && b <= 0x7A ? b - 0x20 : b  // ASCII upper case
                count += 1
            }
            guard count >= 16 else { return nil }
            let bytes = UnsafeBufferPointer(rebasing: buffer[..<count])
            let rootCount = count - 15
            guard (1...6).contains(rootCount), bytes[..<rootCount].allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) else { return nil }
            func number(_ range: Range<Int>) -> Int64? {
                var v: Int64 = 0
                for b in bytes[range] {
                    guard b >= 0x30 && b <= 0x39 else { return nil }
                    v = v * 10 + Int64(b - 0x30)
                }
                return v
            }
            let t = rootCount
            let right: Right
            switch bytes[t + 6] {
            case UInt8(ascii: "C"): right = .call
            case UInt8(ascii: "P"): right = .put
            default: return nil
            }
            guard let yy = number(t..<(t + 2)), let mm = number((t + 2)..<(t + 4)), let dd = number((t + 4)..<(t + 6)),
                case let expiry = CalendarDay(year: 2000 + Int(yy), month: Int(mm), day: Int(dd)), expiry.exists,
                let strike = number((t + 7)..<(t + 15)), strike > 0
            else { return nil }
            return OptionContract(
                underlying: String(decoding: bytes[..<rootCount], as: UTF8.self), expiry: expiry, right: right, strikeThousandths: strike)
        }
        guard let parsed else { return nil }
        self = parsed
    }

    public var symbol: String {
        let strike = String(strikeThousandths)
        return underlying + expiry.yymmdd + right.rawValue + String(repeating: "0", count: max(0, 8 - strike.count)) + strike
    }
}

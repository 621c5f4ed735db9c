import Foundation
import RaxxAPI
import RaxxWire

/// How a page or an order is encoded by the generated model's encoder: as the sandbox and
/// Raptor write it (compact, sorted keys), in the encoder's own key order, and indented.
public enum EncodingStyle: CaseIterable, CustomStringConvertible, Sendable {
    case compactSorted, compactUnsorted, pretty

    public func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            switch self {
            case .compactSorted: [.sortedKeys, .withoutEscapingSlashes]
            case .compactUnsorted: []
            case .pretty: [.prettyPrinted, .sortedKeys]
            }
        let transcoder = RFC3339DateTranscoder()
        encoder.dateEncodingStrategy = .custom { date, e in
            var c = e.singleValueContainer()
            try c.encode(try transcoder.encode(date))
        }
        return Array(try encoder.encode(value))
    }

    public var description: String {
        switch self {
        case .compactSorted: "compact, sorted"
        case .compactUnsorted: "compact, unsorted"
        case .pretty: "indented"
        }
    }
}

/// Values of the spec's types from one seed (SplitMix64): every field, every enum value, optional
/// fields present or not, text with escapes, non-ASCII and control characters, dates to the
/// millisecond across the years RFC 3339 writes.
public struct ModelRandom {
    private var state: UInt64
    /// Text without anything JSONEncoder would escape, and integers of at most 18 digits: what
    /// the fast reader takes whole, with no fallback.
    public let plainText: Bool

    public init(_ seed: UInt64, plainText: Bool = false) {
        state = seed
        self.plainText = plainText
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    public mutating func bool() -> Bool { next() & 1 == 1 }

    public mutating func pick<T>(_ values: [T]) -> T { values[int(0...values.count - 1)] }

    public mutating func int64() -> Int64 {
        // The fast reader's whole path takes integers of up to 18 digits; longer ones it leaves to
        // the decoder.
        let widest: Int64 = 999_999_999_999_999_999
        return switch int(0...5) {
        case 0: plainText ? pick([0, 1, -1, widest, -widest]) : pick([0, 1, -1, .max, .min, widest + 1])
        case 1: plainText ? Int64(bitPattern: next()) % (widest + 1) : Int64(bitPattern: next())
        default: Int64(int(-100_000...100_000))
        }
    }

    public mutating func text(_ length: ClosedRange<Int>) -> String {
        let plain: [Character] = Array("abcXYZ019 -_.:")
        let awkward: [Character] = ["\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "漢", "🙂", "\u{2028}", "\u{85}"]
        var out = ""
        for _ in 0..<int(length) {
            let awkwardOne = !plainText && int(0...3) == 0
            out.append(awkwardOne ? pick(awkward) : pick(plain))
        }
        return out
    }

    public mutating func money() -> String {
        let whole = int(0...2_000_000), cents = int(0...99)
        return (bool() ? "-" : "") + "\(whole)" + (bool() ? String(format: ".%02d", cents) : "")
    }

    /// A date to the millisecond, from 1583 (the Gregorian calendar's first whole year, where
    /// RFC 3339's fast reading starts) to 9999, made with the reading's arithmetic (seconds from
    /// the reference date, plus the milliseconds), so that a date that reads back is equal.
    public mutating func date() -> Date {
        let earliest: Int64 = -12_212_553_600_000, latest: Int64 = 253_402_300_799_999
        let millis =
            switch int(0...3) {
            case 0: Int64(int(1_700_000_000...1_900_000_000)) * 1_000  // whole seconds, as most are
            default: earliest + Int64(next() % UInt64(latest - earliest + 1))
            }
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        return Date(timeIntervalSinceReferenceDate: Double(seconds - 978_307_200) + Double(millis - seconds * 1000) / 1000)
    }

    public mutating func page(changes: ClosedRange<Int> = 0...12) -> Components.Schemas.SyncPage {
        .init(
            changes: (0..<int(changes)).map { _ in change() }, cursor: int64(), hasMore: bool(), reset: bool(), asOf: date(),
            total: bool() ? int64() : nil)
    }

    public mutating func change() -> Components.Schemas.SyncChange {
        let entity = pick(Components.Schemas.SyncEntity.allCases)
        let op = pick(Components.Schemas.SyncChange.OpPayload.allCases)
        var change = Components.Schemas.SyncChange(seq: int64(), entity: entity, op: op, id: text(1...12))
        if op == .upsert || int(0...4) == 0 {
            switch entity {
            case .position: change.position = position()
            case .fill: change.fill = fill()
            case .order: change.order = order()
            }
        }
        return change
    }

    public mutating func position() -> Components.Schemas.Position {
        .init(id: text(1...12), symbol: text(1...21), qty: int64(), avgPrice: money(), updatedAt: date())
    }

    public mutating func fill() -> Components.Schemas.Fill {
        .init(
            id: text(1...12), orderId: text(1...12), symbol: text(1...21), side: pick(Components.Schemas.Side.allCases), qty: int64(),
            price: money(), filledAt: date())
    }

    public mutating func order() -> Components.Schemas.Order {
        .init(
            id: text(1...12), clientOrderId: text(1...36), symbol: text(1...21), side: pick(Components.Schemas.Side.allCases),
            qty: int64(), _type: pick(Components.Schemas.OrderType.allCases), limitPrice: bool() ? money() : nil,
            tif: pick(Components.Schemas.TimeInForce.allCases), status: pick(Components.Schemas.OrderStatus.allCases),
            filledQty: int64(), avgFillPrice: bool() ? money() : nil, rejectCode: bool() ? text(1...16) : nil,
            mode: pick(Components.Schemas.TradingMode.allCases), notAfter: bool() ? date() : nil, createdAt: date(),
            updatedAt: date())
    }

    /// `text` as a JSON string literal written by hand or by another encoder: the escapes JSON
    /// requires, each of its spellings (`\n` or `\u000a`, `/` or `\/`), and now and then a
    /// character of the Basic Multilingual Plane as `\uXXXX`.
    public mutating func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += bool() ? "\\/" : "/"
            case "\n": out += bool() ? "\\n" : "\\u000a"
            case "\t": out += bool() ? "\\t" : "\\u0009"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            case _ where scalar.value > 0x7F && scalar.value < 0xFFFF && int(0...3) == 0: out += String(format: "\\u%04X", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// One random edit of `bytes`, of the kinds a cut connection, a bad proxy or a bug makes:
    /// a byte dropped, changed or added (mostly JSON's own), a cut, a span repeated.
    public mutating func damage(_ bytes: [UInt8]) -> [UInt8] {
        guard !bytes.isEmpty else { return bytes }
        var out = bytes
        let at = int(0...bytes.count - 1)
        let significant = Array(#"{}[]",:-.0123456789eEtrufalsn \"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xFF]
        switch int(0...5) {
        case 0: out.remove(at: at)
        case 1: out[at] = pick(significant)
        case 2: out.insert(pick(significant), at: at)
        case 3: out.removeSubrange(at...)
        case 4:
            let end = min(bytes.count, at + int(1...24))
            out.insert(contentsOf: bytes[at..<end], at: end)
        default: out[at] = UInt8(truncatingIfNeeded: next())
        }
        return out
    }
}

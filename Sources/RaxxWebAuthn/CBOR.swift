/// The small part of CBOR (RFC 8949) that WebAuthn needs: unsigned and negative integers, byte and
/// text strings, arrays, maps, booleans and null, definite lengths only.
public indirect enum CBOR: Hashable, Sendable {
    case unsigned(UInt64)
    case negative(UInt64)  // the value is -1 - n
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([(CBOR, CBOR)])
    case bool(Bool)
    case null

    public static func int(_ v: Int64) -> CBOR { v >= 0 ? .unsigned(UInt64(v)) : .negative(UInt64(-1 - v)) }

    public var intValue: Int64? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }

    public var bytesValue: [UInt8]? { if case .bytes(let b) = self { b } else { nil } }
    public var textValue: String? { if case .text(let t) = self { t } else { nil } }

    /// The value under `key` in a map.
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    public static func == (a: CBOR, b: CBOR) -> Bool {
        switch (a, b) {
        case (.unsigned(let x), .unsigned(let y)), (.negative(let x), .negative(let y)): x == y
        case (.bytes(let x), .bytes(let y)): x == y
        case (.text(let x), .text(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.map(let x), .map(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(encoded())
    }

    // MARK: Encoding

    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    private static func head(_ major: UInt8, _ value: UInt64, into out: inout [UInt8]) {
        let m = major << 5
        switch value {
        case 0..<24: out.append(m | UInt8(value))
        case 24...0xFF: out += [m | 24, UInt8(value)]
        case 0x100...0xFFFF: out += [m | 25] + (0..<2).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        case 0x1_0000...0xFFFF_FFFF: out += [m | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        default: out += [m | 27] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
    }

    private func encode(into out: inout [UInt8]) {
        switch self {
        case .unsigned(let n): Self.head(0, n, into: &out)
        case .negative(let n): Self.head(1, n, into: &out)
        case .bytes(let b): Self.head(2, UInt64(b.count), into: &out); out += b
        case .text(let t): let u = Array(t.utf8); Self.head(3, UInt64(u.count), into: &out); out += u
        case .array(let items):
            Self.head(4, UInt64(items.count), into: &out)
            for item in items { item.encode(into: &out) }
        case .map(let pairs):
            Self.head(5, UInt64(pairs.count), into: &out)
            for (k, v) in pairs { k.encode(into: &out); v.encode(into: &out) }
        case .bool(let b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        }
    }

    // MARK: Decoding

    public struct DecodingError: Error, Equatable, Sendable {
        public var reason: String
    }

    /// Decodes one item from the start of `bytes`; answers it and how many bytes it took.
    public static func decode(prefixOf bytes: [UInt8]) throws(DecodingError) -> (CBOR, Int) {
        var reader = Reader(bytes: bytes)
        let value = try reader.item(depth: 0)
        return (value, reader.offset)
    }

    /// Decodes exactly one item that fills `bytes`.
    public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> CBOR {
        let (value, used) = try decode(prefixOf: bytes)
        guard used == bytes.count else { throw DecodingError(reason: "trailing bytes after the CBOR item") }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func byte() throws(DecodingError) -> UInt8 {
            guard offset < bytes.count else { throw DecodingError(reason: "truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ n: UInt64) throws(DecodingError) -> [UInt8] {
            guard n <= UInt64(bytes.count - offset) else { throw DecodingError(reason: "truncated") }
            defer { offset += Int(n) }
            return Array(bytes[offset..<(offset + Int(n))])
        }

        mutating func argument(_ info: UInt8) throws(DecodingError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                var v: UInt64 = 0
                for b in try take(1 << UInt64(info - 24)) { v = v << 8 | UInt64(b) }
                return v
            default: throw DecodingError(reason: "indefinite lengths are not supported")
            }
        }

        mutating func item(depth: Int) throws(DecodingError) -> CBOR {
            guard depth < 16 else { throw DecodingError(reason: "nested too deeply") }
            let initial = try byte()
            let major = initial >> 5, info = initial & 0x1F
            switch major {
            case 0: return .unsigned(try argument(info))
            case 1: return .negative(try argument(info))
            case 2: return .bytes(try take(try argument(info)))
            case 3:
                let raw = try take(try argument(info))
                guard let s = String(validating: raw, as: UTF8.self) else { throw DecodingError(reason: "invalid UTF-8 text") }
                return .text(s)
            case 4:
                let n = try argument(info)
                guard n <= UInt64(bytes.count - offset) else { throw DecodingError(reason: "truncated") }
                var items: [CBOR] = []
                for _ in 0..<n { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                let n = try argument(info)
                guard n <= UInt64(bytes.count - offset) else { throw DecodingError(reason: "truncated") }
                var pairs: [(CBOR, CBOR)] = []
                for _ in 0..<n {
                    let k = try item(depth: depth + 1)
                    pairs.append((k, try item(depth: depth + 1)))
                }
                return .map(pairs)
            case 7:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw DecodingError(reason: "unsupported simple value or float")
                }
            default:
                throw DecodingError(reason: "tags are not supported")
            }
        }
    }
}

/// A JSON object read in one pass over its bytes, for input lines read by the thousand (the push
/// lines): each top-level member's key and value, with no Foundation objects made on the way.
///
/// It is strict and conservative: it answers nil for anything it does not read with certainty —
/// a `\u` escape outside the Basic Multilingual Plane's plain characters, a
/// control character or invalid UTF-8 in a string, an exponent, a key given twice, nesting deeper
/// than `maximumDepth`, text after the object — and the caller then reads the line the general way
/// (JSONSerialization), which says what is wrong or reads what is unusual. What it does answer is
/// what the general way reads (a property test holds the two to each other).
public struct FlatJSONObject: Sendable {
    public enum Value: Sendable, Equatable {
        case string(String)
        /// A number without fraction or exponent that fits in 64 bits.
        case integer(Int64)
        /// Any other number (a fraction), as written.
        case number(String)
        case bool(Bool)
        case null
        /// An object, compact (its bytes without the whitespace outside strings).
        case object([UInt8])
        /// An array, compact.
        case array([UInt8])
    }

    public private(set) var members: [(key: String, value: Value)] = []

    public static let maximumDepth = 64

    /// Reads `bytes` as one JSON object; nil when it is not one, or is one this reader leaves to
    /// the general way.
    public init?(_ bytes: [UInt8]) {
        let members: [(key: String, value: Value)]? = bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer)
            return reader.object()
        }
        guard let members else { return nil }
        self.members = members
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

        mutating func skipSpace() {
            while at < bytes.count {
                switch bytes[at] {
                case 0x20, 0x09, 0x0A, 0x0D: at += 1
                default: return
                }
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        mutating func object() -> [(key: String, value: Value)]? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var members: [(key: String, value: Value)] = []
            if !take(UInt8(ascii: "}")) {
                repeat {
                    skipSpace()
                    guard let key = string(), take(UInt8(ascii: ":")), let value = value() else { return nil }
                    // A key given twice: which one counts is the general reader's to say.
                    guard !members.contains(where: { $0.key == key }) else { return nil }
                    members.append((key, value))
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "}")) else { return nil }
            }
            skipSpace()
            return at == bytes.count ? members : nil
        }

        mutating func value() -> Value? {
            skipSpace()
            guard at < bytes.count else { return nil }
            switch bytes[at] {
            case Self.quote:
                return string().map(Value.string)
            case UInt8(ascii: "{"):
                let start = at
                guard skipNested(depth: 0) else { return nil }
                return .object(compact(start..<at))
            case UInt8(ascii: "["):
                let start = at
                guard skipNested(depth: 0) else { return nil }
                return .array(compact(start..<at))
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            default:
                guard let range = number() else { return nil }
                let text = bytes[range]
                if !text.contains(UInt8(ascii: ".")), let integer = Int64(String(decoding: text, as: UTF8.self)) {
                    return .integer(integer)
                }
                return text.contains(UInt8(ascii: ".")) ? .number(String(decoding: text, as: UTF8.self)) : nil
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard at + count <= bytes.count else { return false }
            for i in 0..<count where bytes[at + i] != word.utf8Start[i] { return false }
            at += count
            return true
        }

        /// A number without an exponent: -?(0|[1-9][0-9]*)(\.[0-9]+)?
        mutating func number() -> Range<Int>? {
            let start = at
            if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard at < bytes.count, isDigit(bytes[at]) else { return nil }
            if bytes[at] == UInt8(ascii: "0") {
                at += 1
            } else {
                while at < bytes.count, isDigit(bytes[at]) { at += 1 }
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
                at += 1
                guard at < bytes.count, isDigit(bytes[at]) else { return nil }
                while at < bytes.count, isDigit(bytes[at]) { at += 1 }
            }
            // An exponent, or a digit run too long to be read the same way by every reader.
            if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") { return nil }
            guard at - start <= 18 else { return nil }
            return start..<at
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        /// At a string's opening quote: its text, with its escapes read, and moves past it.
        mutating func string() -> String? {
            guard let (raw, escaped, ascii) = scanString() else { return nil }
            if escaped { return unescape(raw) }
            let text = String(decoding: raw, as: UTF8.self)
            // Decoding repairs invalid UTF-8: the text is the bytes exactly when they were valid.
            return ascii || text.utf8.elementsEqual(raw) ? text : nil
        }

        /// At a string's opening quote: moves past it, checked as `string()` reads it, without
        /// making its text (the strings inside a payload are only skipped).
        mutating func skipString() -> Bool {
            guard let (raw, escaped, ascii) = scanString() else { return false }
            if escaped { return unescape(raw) != nil }
            return ascii || String(decoding: raw, as: UTF8.self).utf8.elementsEqual(raw)
        }

        /// At a string's opening quote: its raw bytes between the quotes, whether it has escapes,
        /// and whether it is all ASCII; moves past it. Nil for a control character or no end.
        mutating func scanString() -> (raw: UnsafeBufferPointer<UInt8>, escaped: Bool, ascii: Bool)? {
            guard at < bytes.count, bytes[at] == Self.quote else { return nil }
            let start = at + 1
            var i = start
            var escaped = false
            var ascii = true
            while i < bytes.count {
                let byte = bytes[i]
                if byte == Self.quote { break }
                if byte < 0x20 { return nil }
                if byte >= 0x80 { ascii = false }
                if byte == Self.backslash {
                    guard i + 1 < bytes.count else { return nil }
                    escaped = true
                    i += bytes[i + 1] == UInt8(ascii: "u") ? 6 : 2
                    continue
                }
                i += 1
            }
            guard i < bytes.count else { return nil }
            at = i + 1
            return (UnsafeBufferPointer(rebasing: bytes[start..<i]), escaped, ascii)
        }

        /// The text of a string with escapes. `\u` escapes of surrogates are left to the general reader.
        func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> String? {
            var out: [UInt8] = []
            out.reserveCapacity(raw.count)
            var i = 0
            while i < raw.count {
                let byte = raw[i]
                guard byte == Self.backslash else { out.append(byte); i += 1; continue }
                guard i + 1 < raw.count else { return nil }
                switch raw[i + 1] {
                case UInt8(ascii: "\""): out.append(Self.quote)
                case UInt8(ascii: "\\"): out.append(Self.backslash)
                case UInt8(ascii: "/"): out.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard i + 6 <= raw.count else { return nil }
                    var scalar: UInt32 = 0
                    for digit in raw[(i + 2)..<(i + 6)] {
                        let value: UInt8
                        switch digit {
                        case UInt8(ascii: "0")...UInt8(ascii: "9"): value = digit - UInt8(ascii: "0")
                        case UInt8(ascii: "a")...UInt8(ascii: "f"): value = digit - UInt8(ascii: "a") + 10
                        case UInt8(ascii: "A")...UInt8(ascii: "F"): value = digit - UInt8(ascii: "A") + 10
                        default: return nil
                        }
                        scalar = scalar << 4 | UInt32(value)
                    }
                    guard scalar != 0, !(0xD800...0xDFFF).contains(scalar), let unicode = Unicode.Scalar(scalar) else { return nil }
                    out.append(contentsOf: Array(String(Character(unicode)).utf8))
                    i += 6
                    continue
                default: return nil
                }
                i += 2
            }
            return String(validating: out, as: UTF8.self)
        }

        /// At `{` or `[`: moves past the whole value, checking everything in it.
        mutating func skipNested(depth: Int) -> Bool {
            guard depth < FlatJSONObject.maximumDepth else { return false }
            let isObject = bytes[at] == UInt8(ascii: "{")
            at += 1
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            if take(close) { return true }
            repeat {
                skipSpace()
                if isObject {
                    guard skipString(), take(UInt8(ascii: ":")) else { return false }
                    skipSpace()
                }
                guard at < bytes.count else { return false }
                // What value() would read, checked the same way but not made.
                switch bytes[at] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard skipNested(depth: depth + 1) else { return false }
                case Self.quote:
                    guard skipString() else { return false }
                case UInt8(ascii: "t"):
                    guard literal("true") else { return false }
                case UInt8(ascii: "f"):
                    guard literal("false") else { return false }
                case UInt8(ascii: "n"):
                    guard literal("null") else { return false }
                default:
                    // A number value() reads: number() allows at most 18 characters, which
                    // always fit an Int64 when there is no fraction.
                    guard number() != nil else { return false }
                }
            } while take(UInt8(ascii: ","))
            return take(close)
        }

        /// The bytes of `range` without the whitespace outside strings.
        func compact(_ range: Range<Int>) -> [UInt8] { JSONMember.compact(bytes, range) }
    }
}

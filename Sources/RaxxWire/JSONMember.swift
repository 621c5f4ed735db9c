/// The value of one top-level member of a JSON object, as the bytes it was written with, minus the
/// whitespace outside its strings: `push` sends a line's `payload` this way instead of parsing it
/// into Foundation objects and writing it out again (which cost more than all the rest of a push,
/// and put the payload's keys in an arbitrary order).
///
/// Only for text already known to be one well-formed JSON object (JSONSerialization read the line
/// first): the scan answers nil at anything it does not expect, and the caller falls back to
/// writing the parsed value out again.
public enum JSONMember {
    /// The compact bytes of the value of the top-level member `name` (the last one, when it is
    /// given twice, as JSONSerialization keeps the last), or nil when there is none or the scan
    /// meets something unexpected.
    public static func compactValue(named name: String, in text: [UInt8]) -> [UInt8]? {
        text.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(bytes: buffer)
            return scanner.member(Array(name.utf8))
        }
    }

    /// The bytes of `range` of `bytes` (a JSON value) without the whitespace outside strings.
    /// Shared by the readers of this module that hand a value on as written.
    static func compact(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [UInt8] {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        return [UInt8](unsafeUninitializedCapacity: range.count) { out, written in
            var n = 0
            var inString = false
            var i = range.lowerBound
            while i < range.upperBound {
                let byte = bytes[i]
                if inString {
                    out[n] = byte
                    n += 1
                    if byte == backslash, i + 1 < range.upperBound {
                        out[n] = bytes[i + 1]
                        n += 1
                        i += 1
                    } else if byte == quote {
                        inString = false
                    }
                } else {
                    switch byte {
                    case 0x20, 0x09, 0x0A, 0x0D: break
                    default:
                        if byte == quote { inString = true }
                        out[n] = byte
                        n += 1
                    }
                }
                i += 1
            }
            written = n
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

        static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

        mutating func skipSpace() {
            while at < bytes.count && Self.isSpace(bytes[at]) { at += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        /// At a string's opening quote: moves past its closing quote; answers its content's range.
        mutating func string() -> Range<Int>? {
            guard at < bytes.count, bytes[at] == Self.quote else { return nil }
            let start = at + 1
            var i = start
            while i < bytes.count {
                switch bytes[i] {
                case Self.quote:
                    at = i + 1
                    return start..<i
                case Self.backslash: i += 2
                default: i += 1
                }
            }
            return nil
        }

        /// At a value: moves past it; answers its range.
        mutating func value() -> Range<Int>? {
            skipSpace()
            guard at < bytes.count else { return nil }
            let start = at
            switch bytes[at] {
            case Self.quote:
                guard string() != nil else { return nil }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while at < bytes.count {
                    switch bytes[at] {
                    case Self.quote:
                        guard string() != nil else { return nil }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                    default: break
                    }
                    at += 1
                    if depth == 0 { return start..<at }
                }
                return nil
            default:
                // A number, true, false or null: up to the next delimiter.
                while at < bytes.count, !Self.isSpace(bytes[at]), bytes[at] != UInt8(ascii: ","), bytes[at] != UInt8(ascii: "}"),
                    bytes[at] != UInt8(ascii: "]")
                {
                    at += 1
                }
                guard at > start else { return nil }
            }
            return start..<at
        }

        mutating func member(_ name: [UInt8]) -> [UInt8]? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var found: Range<Int>? = nil
            if take(UInt8(ascii: "}")) { return nil }
            repeat {
                skipSpace()
                guard let key = string(), take(UInt8(ascii: ":")), let value = value() else { return nil }
                // A key written with escapes is not compared here: the caller's fallback handles it.
                if bytes[key].contains(Self.backslash) { return nil }
                if bytes[key].elementsEqual(name) { found = value }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")), let found else { return nil }
            return compact(found)
        }

        func compact(_ range: Range<Int>) -> [UInt8] { JSONMember.compact(bytes, range) }
    }
}

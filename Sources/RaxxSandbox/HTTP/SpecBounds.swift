import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The bounds the spec declares on request values (`minimum`, `maximum`, `minItems`, `maxItems`),
/// held in one place for every operation.
///
/// The generated server decodes an integer or an array but does not hold it to its bounds, so a
/// handler would see `limit=-1` or `limit=9223372036854775807` and trap on its first arithmetic.
/// `SpecBoundsMiddleware` checks each request against `table` (generated from the spec by
/// Scripts/gen-bounds, which also fails on a request integer or array that declares no bounds)
/// before the operation decodes it, and refuses the first value out of bounds with a 400 problem
/// naming it. Handlers may then rely on the spec's bounds.
enum SpecBounds {
    struct Bound: Sendable {
        enum Place: Sendable { case query, body }
        enum Kind: Sendable {
            /// A whole number in `range`.
            case integer
            /// An array whose length is in `range`.
            case count
        }

        let place: Place
        /// The parameter's name, or the body field's path from the top ("[]": every element of
        /// an array).
        let field: [String]
        let kind: Kind
        let range: ClosedRange<Int64>

        init(_ place: Place, _ field: [String], _ kind: Kind, _ minimum: Int64, _ maximum: Int64) {
            self.place = place
            self.field = field
            self.kind = kind
            range = minimum...maximum
        }

        /// The refusal of a value out of this bound; `name` is the value's own (a body field in an
        /// array's element names the element: `orders[3].qty`).
        func problem(_ name: String? = nil) -> ProblemError {
            let name = name ?? field.joined(separator: ".")
            let what = "Invalid value for " + (place == .query ? "query parameter '\(name)'" : "field '\(name)'")
            let (low, high) = (range.lowerBound, range.upperBound)
            switch kind {
            case .integer where high == .max:
                return .badRequest("\(what): a whole number of at least \(low).")
            case .integer:
                return .badRequest("\(what): a whole number from \(low) to \(high).")
            case .count where low == 0:
                return .badRequest("\(what): at most \(high) values.")
            case .count:
                return .badRequest("\(what): \(low) to \(high) values.")
            }
        }
    }

    /// The first bound `operationID`'s request breaks, as a 400 problem; nil when it keeps them
    /// all. Values that are absent, and bodies that are not JSON objects, are left to the
    /// generated decoder (which answers for a missing field or a malformed body).
    static func violation(operationID: String, query: Substring?, body: Data?) -> ProblemError? {
        guard let bounds = table[operationID] else { return nil }
        var items: [String: [Substring]]? = nil
        var document: JSONValue? = nil
        for bound in bounds {
            switch bound.place {
            case .query:
                if items == nil { items = query.map(queryItems) ?? [:] }
                guard let values = items?[bound.field[0]] else { continue }
                switch bound.kind {
                case .integer:
                    for value in values {
                        guard let number = Int64(value), bound.range.contains(number) else { return bound.problem() }
                    }
                case .count:
                    guard bound.range.contains(Int64(values.count)) else { return bound.problem() }
                }
            case .body:
                guard let body else { continue }
                if document == nil { document = JSONValue(parsing: body) }
                for (name, value) in document?.values(at: bound.field[...], named: "") ?? [] {
                    switch (bound.kind, value) {
                    case (.integer, .number(let number)):
                        guard number.isWhole, number >= Decimal(bound.range.lowerBound), number <= Decimal(bound.range.upperBound) else {
                            return bound.problem(name)
                        }
                    case (.integer, _):
                        return bound.problem(name)
                    case (.count, .array(let elements)):
                        guard bound.range.contains(Int64(elements.count)) else { return bound.problem(name) }
                    case (.count, _):
                        continue  // not an array: the decoder names the wrong type
                    }
                }
            }
        }
        return nil
    }

    /// A query's values by parameter name (percent-decoded, `+` as a space, as form style has it).
    static func queryItems(_ query: Substring) -> [String: [Substring]] {
        var items: [String: [Substring]] = [:]
        for item in query.split(separator: "&") where !item.isEmpty {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decoded(parts[0])
            items[String(name), default: []].append(parts.count > 1 ? decoded(parts[1]) : "")
        }
        return items
    }

    private static func decoded(_ text: Substring) -> Substring {
        guard text.contains("%") || text.contains("+") else { return text }
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return Substring(spaced.removingPercentEncoding ?? spaced)
    }

    /// As much of a JSON body as the bounds need: objects (every field, a repeated name each time
    /// it comes), numbers (exactly, as decimals) and arrays.
    enum JSONValue: Equatable {
        case object([(String, JSONValue)])
        case number(Decimal)
        case array([JSONValue])
        case other

        /// `body` read, or `.other` when it is not JSON (left to the generated decoder, which
        /// answers for it). Read from its bytes: JSONDecoder, trying each kind in turn, was an
        /// eighth of the sandbox's work on an order. A body the reader refuses goes to JSONDecoder
        /// after all, as every body did: it also reads a byte order mark, UTF-16 and UTF-32, and
        /// what it reads the generated decoder reads too, so its bounds must be checked.
        init(parsing body: Data) {
            let read: JSONValue? = body.withUnsafeBytes { bytes in
                var reader = Reader(bytes: bytes)
                return try? reader.document()
            }
            self = read ?? Self.decoded(body)
        }

        /// The general reading, for what `Reader` refuses (and what tests hold `Reader` to):
        /// JSONDecoder trying each kind in turn; `.other` when it reads no JSON.
        static func decoded(_ body: Data) -> JSONValue {
            (try? JSONDecoder().decode(Decoded.self, from: body))?.value ?? .other
        }

        private struct Decoded: Decodable {
            let value: JSONValue

            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let object = try? c.decode([String: Decoded].self) {
                    value = .object(object.map { ($0.key, $0.value.value) })
                } else if c.decodeNil() {
                    value = .other
                } else if (try? c.decode(Bool.self)) != nil {
                    value = .other
                } else if let number = try? c.decode(Decimal.self) {
                    value = .number(number)
                } else if let elements = try? c.decode([Decoded].self) {
                    value = .array(elements.map(\.value))
                } else {
                    value = .other
                }
            }
        }

        /// The values at `path`, each with its name (`orders[3].qty`): "[]" goes into every
        /// element of an array, and a name given twice in an object is followed both times (the
        /// decoder keeps one of them: both are held to the bound). A path that leads nowhere has
        /// none.
        func values(at path: ArraySlice<String>, named name: String) -> [(String, JSONValue)] {
            guard let key = path.first else { return [(name, self)] }
            switch (key, self) {
            case ("[]", .array(let elements)):
                return elements.enumerated().flatMap { $1.values(at: path.dropFirst(), named: "\(name)[\($0)]") }
            case (_, .object(let fields)):
                guard key != "[]" else { return [] }
                return fields.filter { $0.0 == key }.flatMap { $0.1.values(at: path.dropFirst(), named: name.isEmpty ? key : name + "." + key) }
            default:
                return []
            }
        }

        static func == (a: JSONValue, b: JSONValue) -> Bool {
            switch (a, b) {
            case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
            case (.number(let x), .number(let y)): x == y
            case (.array(let x), .array(let y)): x == y
            case (.other, .other): true
            default: false
            }
        }
    }

    /// JSON (RFC 8259) read strictly from bytes: one value and nothing after it but whitespace,
    /// nested at most `maxDepth` deep (as JSONDecoder allows). Strings are read only as object
    /// names (escapes decoded, so `q\u0074y` is `qty`); other strings, true, false and null are
    /// `.other`.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var i = 0
        var depth = 0
        static let maxDepth = 512

        struct Malformed: Error {}

        mutating func document() throws -> JSONValue {
            let value = try self.value()
            skipWhitespace()
            guard i == bytes.count else { throw Malformed() }
            return value
        }

        mutating func skipWhitespace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }

        mutating func value() throws -> JSONValue {
            skipWhitespace()
            guard i < bytes.count else { throw Malformed() }
            switch bytes[i] {
            case UInt8(ascii: "{"):
                i += 1
                depth += 1
                guard depth <= Self.maxDepth else { throw Malformed() }
                defer { depth -= 1 }
                var fields: [(String, JSONValue)] = []
                skipWhitespace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(fields) }
                while true {
                    skipWhitespace()
                    let name = try string(keeping: true)
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    fields.append((name, try value()))
                    skipWhitespace()
                    guard i < bytes.count else { throw Malformed() }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    try expect(UInt8(ascii: "}"))
                    return .object(fields)
                }
            case UInt8(ascii: "["):
                i += 1
                depth += 1
                guard depth <= Self.maxDepth else { throw Malformed() }
                defer { depth -= 1 }
                var elements: [JSONValue] = []
                skipWhitespace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(elements) }
                while true {
                    elements.append(try value())
                    skipWhitespace()
                    guard i < bytes.count else { throw Malformed() }
                    if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                    try expect(UInt8(ascii: "]"))
                    return .array(elements)
                }
            case UInt8(ascii: "\""):
                _ = try string(keeping: false)
                return .other
            case UInt8(ascii: "t"): try literal("true"); return .other
            case UInt8(ascii: "f"): try literal("false"); return .other
            case UInt8(ascii: "n"): try literal("null"); return .other
            default:
                return try number()
            }
        }

        mutating func expect(_ byte: UInt8) throws {
            guard i < bytes.count, bytes[i] == byte else { throw Malformed() }
            i += 1
        }

        mutating func literal(_ word: StaticString) throws {
            let count = word.utf8CodeUnitCount
            guard bytes.count - i >= count else { throw Malformed() }
            for k in 0..<count where bytes[i + k] != word.utf8Start[k] { throw Malformed() }
            i += count
        }

        /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, as a decimal.
        mutating func number() throws -> JSONValue {
            let start = i
            func digits() throws {
                let first = i
                while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
                guard i > first else { throw Malformed() }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            if i < bytes.count, bytes[i] == UInt8(ascii: "0") { i += 1 } else { try digits() }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") { i += 1; try digits() }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                try digits()
            }
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            guard let number = Decimal(string: text, locale: nil), !number.isNaN else { return .other }
            return .number(number)
        }

        /// A string at `i` (its opening quote); its text when `keeping`, escapes decoded.
        /// FlatJSONObject (RaxxWire) decodes the same escapes, but leaves `\u0000` and surrogate
        /// pairs to a general reader behind it; here every valid document must be read whole, or
        /// its bounds would go unchecked, so this reader decodes them itself.
        mutating func string(keeping: Bool) throws -> String {
            try expect(UInt8(ascii: "\""))
            var text: [UInt8] = []
            while true {
                guard i < bytes.count else { throw Malformed() }
                let byte = bytes[i]
                i += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard keeping else { return "" }
                    guard let string = String(validating: text, as: UTF8.self) else { throw Malformed() }
                    return string
                case UInt8(ascii: "\\"):
                    guard i < bytes.count else { throw Malformed() }
                    let escape = bytes[i]
                    i += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                    case UInt8(ascii: "b"): text.append(0x08)
                    case UInt8(ascii: "f"): text.append(0x0C)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            // A high surrogate: its low one must follow.
                            guard bytes.count - i >= 2, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else { throw Malformed() }
                            i += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw Malformed() }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw Malformed()
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw Malformed() }
                        text.append(contentsOf: Array(String(Character(unicode)).utf8))
                    default:
                        throw Malformed()
                    }
                case 0x00..<0x20:
                    throw Malformed()
                default:
                    if keeping { text.append(byte) }
                }
            }
        }

        mutating func hex4() throws -> UInt32 {
            guard bytes.count - i >= 4 else { throw Malformed() }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[i]
                i += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw Malformed()
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
    }
}

extension Decimal {
    fileprivate var isWhole: Bool {
        var value = self, rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .plain)
        return rounded == self
    }
}

/// Holds every request to the spec's bounds (`SpecBounds`) before its operation decodes it.
struct SpecBoundsMiddleware: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    )
        async throws -> (HTTPResponse, HTTPBody?)
    {
        guard SpecBounds.table[operationID] != nil else { return try await next(request, body, metadata) }
        let path = request.path ?? ""
        let query = path.firstIndex(of: "?").map { path[path.index(after: $0)...] }
        // The body is in memory already (BodyLimitMiddleware collected it, within its bound).
        var data: Data? = nil
        if let body { data = try await Data(collecting: body, upTo: ProblemError.maxBodyBytes) }
        if let problem = SpecBounds.violation(operationID: operationID, query: query, body: data) { throw problem }
        return try await next(request, data.map { HTTPBody($0) }, metadata)
    }
}

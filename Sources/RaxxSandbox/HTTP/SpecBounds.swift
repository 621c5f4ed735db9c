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

    /// As much of a JSON body as the bounds need: objects, numbers (exactly, as decimals) and
    /// arrays, as JSONDecoder reads them (a name given twice is read as the operation reads it).
    enum JSONValue: Equatable {
        case object([(String, JSONValue)])
        case number(Decimal)
        case array([JSONValue])
        case other

        /// `body` read by JSONDecoder, the generated decoder's own reader (a byte order mark,
        /// UTF-16 and UTF-32 too: what the operation will read is what is held to the bounds),
        /// trying each kind in turn; `.other` when it reads no JSON (left to the generated
        /// decoder, which answers for it).
        init(parsing body: Data) {
            self = (try? JSONDecoder().decode(Decoded.self, from: body))?.value ?? .other
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
        /// element of an array. A path that leads nowhere has none.
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

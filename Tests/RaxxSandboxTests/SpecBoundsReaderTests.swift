import Foundation
import PropertyBased
import RaxxTestSupport
import Synchronization
import Testing

@testable import RaxxSandbox

/// The bounds read a request's body from its bytes (`SpecBounds.Reader`); they read it with
/// JSONDecoder before, and still do what the reader refuses (`JSONValue.decoded`). Both must find
/// the same values at every bounded path of the spec.
@Suite struct SpecBoundsReaderTests {
    static func describe(_ value: SpecBounds.JSONValue) -> String {
        switch value {
        case .object: "object"
        case .number(let n): "number \(n)"
        case .array(let a): "array \(a.count)"
        case .other: "other"
        }
    }

    /// The values at `path`, each as "name=kind".
    static func values(_ value: SpecBounds.JSONValue, at path: [String]) -> [String] {
        value.values(at: path[...], named: "").map { $0.0 + "=" + describe($0.1) }
    }

    /// Every bounded body path of the spec.
    static let paths: [[String]] = SpecBounds.table.values.flatMap { $0 }.filter { $0.place == .body }.map(\.field)

    /// A random JSON text built around the bounded names, with every kind of value, escapes in
    /// names and values, and whitespace; no name twice in an object (JSONDecoder's dictionary
    /// would keep one of them).
    struct Document {
        var random: ModelRandom
        let names = ["orders", "qty", "timeout_s", "order_ids", "response", "transports", "publicKeyAlgorithm", "symbol", "x"]

        mutating func space() -> String { random.pick(["", "", " ", "\n\t ", "\r\n"]) }

        mutating func number() -> String {
            switch random.int(0...7) {
            case 0: "\(random.int(-3...1_000_001))"
            case 1: "\(random.int64())"
            case 2: "\(random.int(0...99)).\(random.int(0...99))"
            case 3: "\(random.int(1...9))e\(random.int(0...7))"
            case 4: "\(random.int(1...9))E+\(random.int(0...3))"
            case 5: "-0"
            case 6: "1.000"
            default: "12345678901234567890123"
            }
        }

        mutating func name() -> String {
            let plain = random.pick(names)
            guard random.int(0...5) == 0 else { return plain }
            // The same name with one letter escaped.
            var scalars = Array(plain.unicodeScalars)
            let at = random.int(0...scalars.count - 1)
            let escaped = String(format: "\\u%04x", scalars[at].value)
            scalars.remove(at: at)
            var text = String(String.UnicodeScalarView(scalars[..<at])) + escaped
            text += String(String.UnicodeScalarView(scalars[at...]))
            return text
        }

        mutating func value(_ depth: Int) -> String {
            // The top is an object nine times in ten, as every bounded body is.
            switch depth == 0 && random.int(0...9) > 0 ? 0 : depth > 3 ? random.int(2...5) : random.int(0...5) {
            case 0:
                var used = Set<String>()
                var fields: [String] = []
                for _ in 0..<random.int(0...4) {
                    let name = name()
                    let plain = name.replacingOccurrences(of: "\\u00", with: "%").removingPercentEncoding ?? name
                    guard used.insert(plain).inserted else { continue }
                    fields.append(space() + "\"\(name)\"" + space() + ":" + space() + value(depth + 1) + space())
                }
                return "{" + fields.joined(separator: ",") + "}"
            case 1:
                return "[" + (0..<random.int(0...4)).map { _ in space() + value(depth + 1) + space() }.joined(separator: ",") + "]"
            case 2, 3:
                return number()
            case 4:
                return random.pick(["true", "false", "null"])
            default:
                return random.pick([#""AAPL""#, #""a\"b\\c\/d\n\u00e9\ud83d\ude42""#, #""""#, #""qty""#])
            }
        }
    }

    @Test func theReaderFindsWhatJSONDecoderFound() async {
        let found = Mutex(0)
        await propertyCheck(count: 2_000, input: Gen.uint64()) { seed in
            var document = Document(random: ModelRandom(seed))
            let text = document.space() + document.value(0) + document.space()
            let data = Data(text.utf8)
            let model = SpecBounds.JSONValue.decoded(data)
            let read = SpecBounds.JSONValue(parsing: data)
            for path in Self.paths {
                let expected = Self.values(model, at: path)
                let values = Self.values(read, at: path)
                #expect(values == expected, "\(path) in \(text)")
                if !values.isEmpty { found.withLock { $0 += 1 } }
            }
        }
        // The documents reach the bounded paths often enough to say something.
        #expect(found.withLock { $0 } >= 1_000, "\(found.withLock { $0 }) values found")
    }

    /// What the reader refuses but JSONDecoder reads (a byte order mark, UTF-16, UTF-32) the
    /// generated decoder reads too: its bounds are checked all the same.
    @Test func otherEncodingsAreHeldToTheBounds() throws {
        let text = #"{"qty": 0}"#
        let bodies = [
            Data([0xEF, 0xBB, 0xBF]) + Data(text.utf8), try #require(text.data(using: .utf16LittleEndian)),
            try #require(text.data(using: .utf16BigEndian)), try #require(text.data(using: .utf16)),
            try #require(text.data(using: .utf32LittleEndian)),
        ]
        for body in bodies {
            #expect(SpecBounds.violation(operationID: "placeOrder", query: nil, body: body) != nil, "\(Array(body.prefix(8)))")
        }
    }

    /// What the reader refuses is read as JSONDecoder reads it: nothing when it is not JSON, and
    /// what JSONDecoder takes although RFC 8259 does not (a trailing comma) as JSONDecoder takes
    /// it, since the generated decoder will take it too.
    @Test func whatTheReaderRefusesIsReadAsJSONDecoderReadsIt() {
        for text in [
            "", "{", "{\"qty\":}", "{\"qty\":1,}", "[1,]", "{\"qty\":01}", "{\"qty\":1} x", "{\"qty\":.5}", "{\"qty\":1.}",
            "{'qty':1}", "{\"q\\xty\":1}", "{\"q\\ud800ty\":1}", "{\"qty\":tru}", "{\"a\u{1}\":1}", "nul", "{\"qty\":0,}",
        ] {
            let data = Data(text.utf8)
            let model = SpecBounds.JSONValue.decoded(data)
            let read = SpecBounds.JSONValue(parsing: data)
            for path in Self.paths + [["qty"]] {
                #expect(Self.values(read, at: path) == Self.values(model, at: path), "\(path) in \(text)")
            }
        }
        #expect(SpecBounds.violation(operationID: "placeOrder", query: nil, body: Data(#"{"qty":0,}"#.utf8)) != nil)
    }

    /// Nesting past JSONDecoder's depth is not read (and does not exhaust the stack).
    @Test func deepNestingIsLeftToTheDecoder() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(SpecBounds.JSONValue(parsing: Data(deep.utf8)) == .other)
        let allowed = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(SpecBounds.JSONValue(parsing: Data(allowed.utf8)) != .other)
        let over = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(SpecBounds.JSONValue(parsing: Data(over.utf8)) == .other)
    }

    /// A name escaped is the same name, and a name given twice is held to the bound both times:
    /// neither slips a value past the bounds to the decoder.
    @Test func escapedAndRepeatedNamesAreHeldToTheBounds() {
        func problem(_ body: String) -> String? {
            SpecBounds.violation(operationID: "placeOrder", query: nil, body: Data(body.utf8))?.detail
        }
        #expect(problem(#"{"q\u0074y": 0}"#) == "Invalid value for field 'qty': a whole number from 1 to 1000000.")
        #expect(problem(#"{"qty": 5, "qty": 0}"#) != nil)
        #expect(problem(#"{"qty": 0, "qty": 5}"#) != nil)
        #expect(problem(#"{"qty": 5}"#) == nil)
        #expect(problem(#"{"qty": 1e6}"#) == nil)
        #expect(problem(#"{"qty": 1.5}"#) != nil)
        #expect(problem(#"{"qty": 1e7}"#) != nil)
        let orders = "{\"orders\":[" + (0..<5).map { #"{"qty":\#($0 == 3 ? 0 : 1)}"# }.joined(separator: ",") + "]}"
        #expect(
            SpecBounds.violation(operationID: "checkOrders", query: nil, body: Data(orders.utf8))?.detail
                == "Invalid value for field 'orders[3].qty': a whole number from 1 to 1000000.")
    }
}

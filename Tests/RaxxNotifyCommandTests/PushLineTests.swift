import Foundation
import PropertyBased
import RaxxCLI
import RaxxTestSupport
import RaxxWire
import Synchronization
import Testing

@testable import RaxxNotifyCommand

/// `push`'s direct line reader (FlatJSONObject) held to the general one (JSONSerialization) on
/// generated lines: whatever the line, both read the same notification or refuse it the same way.
@Suite struct PushLineTests {
    static let parser = PushLine(defaultTopic: "app.raxx.default", newID: { "00000000-0000-4000-8000-000000000000" })

    /// A JSON value written by hand: spaces where JSON allows them, escapes as JSONSerialization
    /// or as a person would write them.
    struct Writer {
        var random: ModelRandom

        mutating func space() -> String { random.int(0...4) == 0 ? random.pick([" ", "  ", "\t", " \r "]) : "" }

        mutating func string(_ text: String) -> String { random.jsonString(text) }

        mutating func scalar() -> String {
            switch random.int(0...6) {
            case 0: return string(random.text(0...12))
            case 1: return "\(random.int64())"
            case 2: return random.pick(["10.0", "5.5", "-0.25", "1e1", "0", "-0", "1E+2"])
            case 3: return random.bool() ? "true" : "false"
            case 4: return "null"
            default: return string(random.pick(["hello", "Order filled", "Bought 10 AAPL at 190.25", "é🙂"]))
            }
        }

        mutating func value(depth: Int) -> String {
            guard depth < 3 else { return scalar() }
            switch random.int(0...5) {
            case 0: return object(depth: depth + 1)
            case 1: return "[" + space() + (0..<random.int(0...3)).map { _ in value(depth: depth + 1) }.joined(separator: "," + space()) + "]"
            default: return scalar()
            }
        }

        mutating func object(depth: Int) -> String {
            let keys = (0..<random.int(0...4)).map { _ in random.pick(["aps", "alert", "title", "body", "seq", "type", "thread-id", "k\\\"q"]) }
            return "{" + space()
                + keys.map { key in "\"\(key)\"" + space() + ":" + space() + value(depth: depth) }
                .joined(separator: space() + "," + space()) + space() + "}"
        }

        /// A push line: mostly good fields, sometimes of the wrong kind, missing, unknown or twice.
        mutating func line() -> String {
            var members: [(String, String)] = []
            let token =
                random.int(0...9) == 0
                ? String(repeating: "zz", count: 32) : String(repeating: random.pick(["ab", "0F", "9c"]), count: random.pick([32, 40, 100, 101]))
            if random.int(0...9) > 0 { members.append(("device_token", random.int(0...9) == 0 ? scalar() : string(token))) }
            if random.bool() {
                members.append(("topic", random.int(0...5) == 0 ? scalar() : string(random.pick(["app.raxx", "app raxx", "", "app.raxx.voip"]))))
            }
            if random.bool() {
                members.append(("push_type", random.int(0...5) == 0 ? scalar() : string(random.pick(["alert", "background", "voip", "nope"]))))
            }
            if random.bool() { members.append(("priority", random.int(0...3) == 0 ? scalar() : random.pick(["10", "5", "1", "7", "10.0", "\"10\""]))) }
            if random.bool() { members.append(("expiration", random.int(0...3) == 0 ? scalar() : random.pick(["0", "1893456000", "-1", "1.5"]))) }
            if random.int(0...3) == 0 { members.append(("collapse_id", random.int(0...3) == 0 ? scalar() : string(random.text(0...80)))) }
            if random.int(0...3) == 0 {
                members.append(("apns_id", random.int(0...3) == 0 ? scalar() : string(random.pick(["B3D1A7C2-0000-4000-8000-000000000000", "not-a-uuid"]))))
            }
            switch random.int(0...9) {
            case 0: break
            case 1: members.append(("payload", scalar()))
            case 2: members.append(("event", object(depth: 1)))
            default:
                members.append(("payload", random.bool() ? object(depth: 0) : #"{"aps":{"alert":{"title":"Order filled","body":"Bought 10 AAPL"}},"seq":1}"#))
            }
            if random.int(0...9) == 0 { members.append(("extra", scalar())) }
            if random.int(0...11) == 0, let twice = members.first { members.append(twice) }
            for i in members.indices.reversed() where random.int(0...15) == 0 { members.swapAt(i, random.int(0...i)) }
            return space() + "{" + space() + members.map { "\"\($0.0)\"" + space() + ":" + space() + $0.1 }.joined(separator: space() + "," + space())
                + space() + "}" + space()
        }
    }

    static func line(_ bytes: [UInt8]) -> InputLines.Line { InputLines.Line(number: 1, bytes: bytes) }

    @Test func generatedLinesReadTheSameBothWays() async throws {
        let direct = Mutex(0)
        await propertyCheck(count: 3_000, input: Gen.uint64()) { seed in
            var writer = Writer(random: ModelRandom(seed))
            let text = writer.line()
            let line = Self.line(Array(text.utf8))
            #expect(Self.parser.parse(line) == Self.parser.parse(line, direct: false), "\(text)")
            if let flat = FlatJSONObject(line.bytes), PushLine.fields(flat) != nil { direct.withLock { $0 += 1 } }
        }
        // The comparison means something only if many lines take the direct way.
        #expect(direct.withLock { $0 } >= 300, "\(direct.withLock { $0 }) of 3,000 lines read directly")
    }

    @Test func damagedLinesAreRefusedOrReadTheSameBothWays() async throws {
        await propertyCheck(count: 3_000, input: Gen.uint64()) { seed in
            var writer = Writer(random: ModelRandom(seed))
            let bytes = writer.random.damage(Array(writer.line().utf8))
            let line = Self.line(bytes)
            #expect(Self.parser.parse(line) == Self.parser.parse(line, direct: false), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    /// A whole number past 2^53 is read as written both ways (the general way once read it as a
    /// Double, off by a few seconds: found by the property above), and a boolean is no number.
    @Test func wholeNumbersAreReadExactlyAndBooleansAreNone() throws {
        let token = String(repeating: "ab", count: 32)
        for (written, expected) in [("211316571183825648", Int64(211_316_571_183_825_648)), ("9223372036854775807", .max), ("10.0", 10)] {
            let line = Self.line(Array(#"{"device_token":"\#(token)","expiration":\#(written),"payload":{}}"#.utf8))
            let general = Self.parser.parse(line, direct: false)
            #expect(Self.parser.parse(line) == general, "\(written)")
            guard case .notification(let notification) = general else {
                Issue.record("\(written) refused: \(general)")
                continue
            }
            #expect(notification.expiration == expected, "\(written)")
        }
        for field in ["priority", "expiration"] {
            for value in ["true", "false", "9223372036854775808", "1.5"] {
                let line = Self.line(Array(#"{"device_token":"\#(token)","\#(field)":\#(value),"payload":{}}"#.utf8))
                #expect(Self.parser.parse(line, direct: false) == .malformed(field: field, message: "must be a whole number"), "\(field) \(value)")
                #expect(Self.parser.parse(line) == Self.parser.parse(line, direct: false))
            }
        }
    }

    /// The lines the benchmark and the README send are read directly, with no fallback.
    @Test func theUsualLineIsReadDirectly() throws {
        let text =
            #"""
            {"device_token":"abababababababababababababababababababababababababababababababab","payload":{"aps":{"alert":{"title":"Order filled",\#
            "body":"Bought 10 AAPL at 190.25"},"thread-id":"raxx.fill"},"seq":1}}
            """#
        let flat = try #require(FlatJSONObject(Array(text.utf8)))
        let fields = try #require(PushLine.fields(flat))
        #expect(
            String(decoding: fields.payload, as: UTF8.self)
                == #"{"aps":{"alert":{"title":"Order filled","body":"Bought 10 AAPL at 190.25"},"thread-id":"raxx.fill"},"seq":1}"#)
        guard case .notification(let notification) = Self.parser.parse(Self.line(Array(text.utf8))) else {
            Issue.record("not read")
            return
        }
        #expect(notification.topic == "app.raxx.default" && notification.apnsID == "00000000-0000-4000-8000-000000000000")
    }
}

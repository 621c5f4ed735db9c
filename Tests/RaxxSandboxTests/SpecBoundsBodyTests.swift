import Foundation
import Testing

@testable import RaxxSandbox

/// The bounds read a request's body as the generated decoder will, with JSONDecoder: whatever it
/// takes (another encoding, a trailing comma) is held to the bounds.
@Suite struct SpecBoundsBodyTests {
    /// A byte order mark, UTF-16 and UTF-32 are read, and held to the bounds.
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

    /// What JSONDecoder takes although RFC 8259 does not (a trailing comma) is held to the bounds;
    /// what is no JSON is left to the generated decoder.
    @Test func whatJSONDecoderTakesIsHeldToTheBounds() {
        #expect(SpecBounds.violation(operationID: "placeOrder", query: nil, body: Data(#"{"qty":0,}"#.utf8)) != nil)
        #expect(SpecBounds.violation(operationID: "placeOrder", query: nil, body: Data(#"{"qty":1,}"#.utf8)) == nil)
        for text in ["", "{", "{\"qty\":}", "{'qty':1}", "nul"] {
            #expect(SpecBounds.JSONValue(parsing: Data(text.utf8)) == .other, "\(text)")
        }
    }

    /// Escapes in names are decoded: `q\u0074y` is `qty`.
    @Test func anEscapedNameIsTheName() {
        #expect(SpecBounds.violation(operationID: "placeOrder", query: nil, body: Data(#"{"q\u0074y":0}"#.utf8)) != nil)
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
}

import Foundation
import RaxxCore
import RaxxWire
import Testing

@Suite struct Base64URLTests {
    @Test func encodesWithoutPadding() {
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode(Array("hello".utf8)) == "aGVsbG8")
    }

    @Test func decodesPaddedAndUnpadded() {
        #expect(Base64URL.decode("aGVsbG8") == Array("hello".utf8))
        #expect(Base64URL.decode("aGVsbG8=") == Array("hello".utf8))
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("a+b/") == nil)
        #expect(Base64URL.decode("a") == nil)
    }

    @Test func canonicalJSONSortsKeys() throws {
        struct Action: Encodable { var symbol = "AAPL"; var qty = 5; var limit_price = "1/2" }
        #expect(String(decoding: try CanonicalJSON.data(Action()), as: UTF8.self) == #"{"limit_price":"1/2","qty":5,"symbol":"AAPL"}"#)
    }
}

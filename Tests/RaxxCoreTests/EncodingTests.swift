import Foundation
import PropertyBased
import RaxxCore
import RaxxWire
import Testing

@Suite struct Base64URLTests {
    @Test func encodesWithoutPadding() {
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode(Array("hello".utf8)) == "aGVsbG8")
    }

    /// The direct encoder writes what Foundation's base64, made url-safe and unpadded, writes,
    /// for bytes of every length from 0 to 200; and decodes back to them.
    @Test func encodesAsFoundationsBase64MadeURLSafe() async {
        await propertyCheck(count: 3_000, input: Gen.uint64()) { seed in
            var state = seed
            func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
            let bytes = (0..<Int(next() % 201)).map { _ in UInt8(truncatingIfNeeded: next()) }
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == foundation, "\(bytes)")
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.encode([]) == "")
        #expect(Base64URL.encode([0xFF, 0xFF, 0xFF]) == "____")
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

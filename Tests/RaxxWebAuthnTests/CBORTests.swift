import Foundation
import RaxxWebAuthn
import Testing

@Suite struct CBORTests {
    @Test func encodesKnownVectors() {
        // RFC 8949 Appendix A.
        #expect(CBOR.int(0).encoded() == [0x00])
        #expect(CBOR.int(23).encoded() == [0x17])
        #expect(CBOR.int(24).encoded() == [0x18, 0x18])
        #expect(CBOR.int(1000).encoded() == [0x19, 0x03, 0xE8])
        #expect(CBOR.int(-1).encoded() == [0x20])
        #expect(CBOR.int(-7).encoded() == [0x26])
        #expect(CBOR.int(-1000).encoded() == [0x39, 0x03, 0xE7])
        #expect(CBOR.text("a").encoded() == [0x61, 0x61])
        #expect(CBOR.bytes([1, 2, 3, 4]).encoded() == [0x44, 1, 2, 3, 4])
        #expect(CBOR.map([(.int(1), .int(2)), (.int(3), .int(4))]).encoded() == [0xA2, 0x01, 0x02, 0x03, 0x04])
        #expect(CBOR.array([.int(1), .bool(true), .null]).encoded() == [0x83, 0x01, 0xF5, 0xF6])
    }

    @Test func roundTrips() throws {
        let value = CBOR.map([
            (.text("fmt"), .text("none")), (.text("attStmt"), .map([])),
            (.text("authData"), .bytes(Array(repeating: 7, count: 300))), (.int(-3), .int(Int64.min + 1)),
        ])
        #expect(try CBOR.decode(value.encoded()) == value)
        #expect(try CBOR.decode(value.encoded())[.text("fmt")]?.textValue == "none")
    }

    @Test(arguments: [[0x18] as [UInt8], [0x44, 1, 2], [0x5F], [0xA1, 0x01], [0x01, 0x02], [0xC0, 0x01], [0xF9, 0, 0]])
    func refusesMalformedInput(bytes: [UInt8]) {
        #expect(throws: CBOR.DecodingError.self) { try CBOR.decode(bytes) }
    }

    @Test func refusesDeepNesting() {
        let deep = [UInt8](repeating: 0x81, count: 40) + [0x00]
        #expect(throws: CBOR.DecodingError.self) { try CBOR.decode(deep) }
    }
}

import RaxxClient
import Testing

@Suite struct CurlHeaderLineTests {
    func read(_ line: String, keeping names: [String]? = nil) -> CurlHeaderLine {
        var line = line
        return line.withUTF8 { CurlHeaderLine(UnsafeRawBufferPointer($0), keeping: names) }
    }

    @Test func readsEachKindOfLineLibcurlHandsOver() {
        #expect(read("HTTP/2 200 \r\n") == .status)
        #expect(read("HTTP/1.1 100 Continue\r\n") == .status)
        #expect(read("apns-id: 6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11\r\n") == .field(name: "apns-id", value: "6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11"))
        #expect(read("Content-Length:\t42 \r\n") == .field(name: "Content-Length", value: "42"))
        #expect(read("X-Empty:\r\n") == .field(name: "X-Empty", value: ""))
        #expect(read("Location: https://a.example/b:c\r\n") == .field(name: "Location", value: "https://a.example/b:c"))
        #expect(read("\r\n") == .other)
        #expect(read("no colon here\r\n") == .other)
    }

    /// Only the fields asked for are read, their names matched without regard to ASCII case and
    /// given as asked; every other line reads as it would without the list.
    @Test func keepsOnlyTheFieldsAskedFor() {
        let kept = ["apns-id"]
        #expect(read("apns-id: 6B2C9E0A\r\n", keeping: kept) == .field(name: "apns-id", value: "6B2C9E0A"))
        #expect(read("APNS-Id :\t6B2C9E0A \r\n", keeping: kept) == .field(name: "apns-id", value: "6B2C9E0A"))
        #expect(read("apns-unique-id: 1\r\n", keeping: kept) == .other)
        #expect(read("apns-i: 1\r\n", keeping: kept) == .other)
        #expect(read("apns_id: 1\r\n", keeping: kept) == .other)  // '_' is not '-' in another case
        #expect(read("content-length: 0\r\n", keeping: []) == .other)
        #expect(read("HTTP/2 200 \r\n", keeping: kept) == .status)
        #expect(read("\r\n", keeping: kept) == .other)
        #expect(read("no colon here\r\n", keeping: kept) == .other)
        #expect(read("X-Two: a\r\n", keeping: ["x-one", "x-two"]) == .field(name: "x-two", value: "a"))
    }
}

import RaxxClient
import Testing

@Suite struct CurlHeaderLineTests {
    func read(_ line: String) -> CurlHeaderLine {
        var line = line
        return line.withUTF8 { CurlHeaderLine(UnsafeRawBufferPointer($0)) }
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
}

import Foundation
import RaxxSandboxTestSupport
import RaxxTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Requests the HTTP parser rejects before any handler sees them are answered as problem+json too,
/// like every other error of the sandbox.
@Suite(.serialized) struct MalformedHTTPTests {
    /// `exchange`, on a thread of its own: the in-process server needs the cooperative pool.
    func roundTrip(_ url: URL, _ bytes: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try exchange(url, bytes) }) }.start()
        }
    }

    /// Sends `bytes` as they are on a fresh connection and answers what comes back until it closes.
    func exchange(_ url: URL, _ bytes: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)  // a loaded machine may take a while
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(url.port ?? 0).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        _ = bytes.withCString { send(fd, $0, strlen($0), 0) }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer += buffer[..<n]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    @Test(arguments: [
        "GET /api/health HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n",
        "POST /api/orders HTTP/1.1\r\nHost: x\r\nContent-Length: twelve\r\n\r\n",
        "GET /api/he alth HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /api/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    ])
    func isProblemJSON(request: String) async throws {
        try await withSandbox { url in
            let answer = try await roundTrip(url, request)
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer)")
            #expect(answer.lowercased().contains("content-type: application/problem+json"), "\(answer)")
            #expect(answer.contains(#""code":"bad_request""#), "\(answer)")
        }
    }
}

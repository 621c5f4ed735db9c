import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A misbehaving (or plain) server on 127.0.0.1, port 0, for transport and offline tests.
public final class LoopbackListener: Sendable {
    public enum Behavior: Sendable {
        /// Nothing listens: connections are refused.
        case refuse
        /// Accepts and reads, then never answers.
        case hang
        /// Accepts and reads, then resets the connection (RST).
        case reset
        /// Answers every request with this status, headers and body.
        case respond(status: Int, headers: [String: String] = [:], body: String = "")
        /// Answers every request with a large body made as it is sent (never held whole): `body`'s
        /// head, then its filler as many times as fit in `bytes`, then its tail; with a
        /// Content-Length, or chunked. It stops when the client stops reading (`streamsEnded`).
        case stream(status: Int, headers: [String: String] = [:], body: StreamedBody, bytes: Int, chunked: Bool)
    }

    /// What a streamed answer is made of: a JSON document's opening, an element repeated, its end.
    public struct StreamedBody: Sendable {
        public var head: String, filler: String, tail: String
        public init(head: String, filler: String, tail: String) {
            self.head = head
            self.filler = filler
            self.tail = tail
        }
    }

    public let port: Int
    public var url: String { "http://127.0.0.1:\(port)" }
    private let fd: Int32
    private let state = Mutex(State())

    private struct State {
        var requests: [String] = []
        var connections = 0
        var stopped = false
        var clients: [Int32] = []
        var streamedBytes = 0
        var streamsEnded = 0
    }

    /// The raw requests received so far (head and body).
    public var requests: [String] { state.withLock { $0.requests } }
    /// How many connections were accepted.
    public var connections: Int { state.withLock { $0.connections } }
    /// How many bytes of streamed bodies the client's end took, in all.
    public var streamedBytes: Int { state.withLock { $0.streamedBytes } }
    /// How many streamed answers have ended: sent whole, or cut short by the client.
    public var streamsEnded: Int { state.withLock { $0.streamsEnded } }

    /// Listens on `port` (0: any free one), with `behavior`. A fixed port stands in for a server that
    /// went away at that address: the same origin, now refusing, hanging or unhealthy.
    public init(_ behavior: Behavior, port requested: Int = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        self.fd = fd
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(requested).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        port = Int(UInt16(bigEndian: addr.sin_port))
        if case .refuse = behavior {
            // Bound but not listening: a connection is refused, and the port stays this listener's
            // until it stops. Closed here, it went back to the kernel, which could hand it to
            // another test's server (tests run in parallel) before the client connected.
            return
        }
        guard listen(fd, 16) == 0 else { close(fd); throw POSIXError(.EIO) }
        let thread = Thread { [self] in acceptLoop(behavior) }
        thread.start()
    }

    private func acceptLoop(_ behavior: Behavior) {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let stopped: Bool = state.withLock { state in
                if state.stopped { return true }
                state.connections += 1
                state.clients.append(client)
                return false
            }
            if stopped { close(client); return }
            let thread = Thread { [self] in serve(client, behavior) }
            thread.start()
        }
    }

    private func serve(_ client: Int32, _ behavior: Behavior) {
        while let request = readRequest(client) {
            state.withLock { $0.requests.append(request) }
            switch behavior {
            case .refuse:
                return
            case .hang:
                continue  // read more, answer nothing
            case .reset:
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                forget(client)
                return
            case .respond(let status, let headers, let body):
                var head = "HTTP/1.1 \(status) Status\r\nContent-Length: \(body.utf8.count)\r\n"
                for (k, v) in headers.sorted(by: { $0.key < $1.key }) { head += "\(k): \(v)\r\n" }
                let bytes = Array((head + "\r\n" + body).utf8)
                _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            case .stream(let status, let headers, let body, let bytes, let chunked):
                let whole = stream(body, bytes: bytes, chunked: chunked, status: status, headers: headers, to: client)
                state.withLock { $0.streamsEnded += 1 }
                // Cut short by the client: the connection is done with.
                if !whole { forget(client); return }
            }
        }
        forget(client)
    }

    /// Sends a streamed answer, in blocks of about 64 KiB; answers whether all of it was sent.
    private func stream(_ body: StreamedBody, bytes: Int, chunked: Bool, status: Int, headers: [String: String], to client: Int32) -> Bool {
        let head = Array(body.head.utf8), filler = Array(body.filler.utf8), tail = Array(body.tail.utf8)
        let fillers = max(0, (bytes - head.count - tail.count) / filler.count)
        var top = "HTTP/1.1 \(status) Status\r\n"
        top += chunked ? "Transfer-Encoding: chunked\r\n" : "Content-Length: \(head.count + fillers * filler.count + tail.count)\r\n"
        for (k, v) in headers.sorted(by: { $0.key < $1.key }) { top += "\(k): \(v)\r\n" }
        guard sendAll(Array((top + "\r\n").utf8), to: client) else { return false }
        func part(_ data: [UInt8]) -> Bool {
            // (An empty chunk would end a chunked body.)
            guard !data.isEmpty else { return true }
            let framed = chunked ? Array((String(data.count, radix: 16) + "\r\n").utf8) + data + Array("\r\n".utf8) : data
            guard sendAll(framed, to: client) else { return false }
            state.withLock { $0.streamedBytes += data.count }
            return true
        }
        let perBlock = max(1, (64 << 10) / filler.count)
        let block = Array([[UInt8]](repeating: filler, count: perBlock).joined())
        guard part(head) else { return false }
        var left = fillers
        while left > 0 {
            let n = min(left, perBlock)
            guard part(n == perBlock ? block : Array(block.prefix(n * filler.count))) else { return false }
            left -= n
        }
        guard part(tail) else { return false }
        return !chunked || sendAll(Array("0\r\n\r\n".utf8), to: client)
    }

    /// Sends all of `bytes`; false when the client's end is gone.
    private func sendAll(_ bytes: [UInt8], to client: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(client, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    private func forget(_ client: Int32) {
        let wasOpen: Bool = state.withLock { state in
            let wasOpen = state.clients.contains(client)
            state.clients.removeAll { $0 == client }
            return wasOpen
        }
        if wasOpen { close(client) }
    }

    /// Reads one HTTP/1.1 request (head and Content-Length body); nil at end of stream.
    private func readRequest(_ client: Int32) -> String? {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var expected: Int? = nil
        while true {
            if let headEnd = find(data, Array("\r\n\r\n".utf8)) {
                if expected == nil {
                    let head = String(decoding: data[..<headEnd], as: UTF8.self).lowercased()
                    let length =
                        head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    expected = headEnd + 4 + length
                }
                if let expected, data.count >= expected {
                    return String(decoding: data[..<expected], as: UTF8.self)
                }
            }
            let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            data.append(contentsOf: buffer[..<n])
        }
    }

    private func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }

    /// Stops listening and closes every connection.
    public func stop() {
        let open: [Int32]? = state.withLock { state in
            if state.stopped { return nil }
            state.stopped = true
            let open = state.clients
            state.clients.removeAll()
            return open
        }
        guard let open else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        for c in open { shutdown(c, Int32(SHUT_RDWR)); close(c) }
    }

    deinit { stop() }
}

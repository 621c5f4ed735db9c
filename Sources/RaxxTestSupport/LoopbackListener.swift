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
    }

    /// The raw requests received so far (head and body).
    public var requests: [String] { state.withLock { $0.requests } }
    /// How many connections were accepted.
    public var connections: Int { state.withLock { $0.connections } }

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
            // The port was free a moment ago and nothing listens on it now.
            close(fd)
            state.withLock { $0.stopped = true }
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
                continue // read more, answer nothing
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
            }
        }
        forget(client)
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
                    let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
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

import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on 127.0.0.1, port 0, in front of a loopback server: the tools talk to the server
/// through it, and a test cuts the connection (`cut`) as a dropped network would: the connections
/// in progress go dead, and new ones are accepted and never answered, until `restore`. The
/// server itself runs on, unaware. With a byte budget, the server's replies stop flowing once that
/// many bytes have reached the clients (a link gone still mid-reply): a test can then stop a tool
/// at a known point of a long download, whatever the machine's speed.
public final class LoopbackProxy: @unchecked Sendable {
    public let port: Int
    public var url: String { "http://127.0.0.1:\(port)" }
    private let target: Int
    private let fd: Int32
    private let lock = NSLock()
    private var open: Set<Int32> = []
    private var isCut = false
    private var stopped = false
    private var budget: Int?
    private var delivered = 0
    private let flow = NSCondition()
    private var latency = Duration.zero

    /// How long each piece of a request is held before it goes on to the server, as a slow link
    /// holds it (zero, the default, forwards at once): a test that needs a request to arrive late
    /// makes it late by this much, whatever the machine's speed.
    public var requestLatency: Duration {
        get { lock.withLock { latency } }
        set { lock.withLock { latency = newValue } }
    }

    /// Forwards to 127.0.0.1:`target`; with `replyBudget`, at most that many bytes of replies in
    /// all, after which replies hang (`isHolding`) until `release` or `stop`.
    public init(to target: Int, replyBudget: Int? = nil) throws {
        self.target = target
        self.budget = replyBudget
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        self.fd = fd
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        port = Int(UInt16(bigEndian: addr.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    /// Stops forwarding: open connections are dropped, new ones hang unanswered.
    public func cut() {
        let dropped: Set<Int32> = lock.withLock {
            isCut = true
            defer { open.removeAll() }
            return open
        }
        for s in dropped { shutdown(s, Int32(SHUT_RDWR)) }
    }

    /// Forwards again (new connections; the dropped ones stay dropped).
    public func restore() { lock.withLock { isCut = false } }

    /// The reply budget is spent: a client is waiting for bytes that will not come.
    public var isHolding: Bool {
        flow.withLock { budget.map { delivered >= $0 } ?? false }
    }

    /// Lifts the reply budget: new replies flow in full (a reply held part-way stays cut short).
    public func release() {
        flow.withLock {
            budget = nil
            flow.broadcast()
        }
    }

    /// Stops listening and drops every connection.
    public func stop() {
        let dropped: Set<Int32>? = lock.withLock {
            guard !stopped else { return nil }
            stopped = true
            defer { open.removeAll() }
            return open
        }
        guard let dropped else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        for s in dropped { shutdown(s, Int32(SHUT_RDWR)) }
        flow.withLock { flow.broadcast() }
    }

    deinit { stop() }

    private static func loopback(port: Int) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return addr
    }

    private func acceptLoop() {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let (cut, done) = lock.withLock { (isCut, stopped) }
            if done { close(client); return }
            if cut {
                // Black hole: read and drop whatever comes, answer nothing, until the client gives up.
                track(client)
                Thread { [self] in
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while buffer.withUnsafeMutableBytes({ recv(client, $0.baseAddress, $0.count, 0) }) > 0 {}
                    untrack(client)
                    close(client)
                }.start()
                continue
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = Self.loopback(port: target)
            let connected =
                upstream >= 0
                && withUnsafePointer(to: &addr) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                } == 0
            guard connected else {
                if upstream >= 0 { close(upstream) }
                close(client)
                continue
            }
            track(client)
            track(upstream)
            let ends = Ends(client, upstream, proxy: self)
            Thread { [self] in
                pipe(from: client, to: upstream, delayed: true); ends.finish()
            }.start()
            Thread { [self] in
                pipe(from: upstream, to: client, budgeted: true); ends.finish()
            }.start()
        }
    }

    /// Copies bytes one way until either end closes or is dropped (or, for replies, until the
    /// budget is spent: the connection then stays open, silent, until `release` or `stop`, and ends
    /// with its reply cut short).
    private func pipe(from source: Int32, to sink: Int32, budgeted: Bool = false, delayed: Bool = false) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            if delayed {
                // Held from the moment it came in (requestLatency): the link's delay, not a test's wait.
                let due = ContinuousClock.now + requestLatency
                while ContinuousClock.now < due { usleep(1_000) }
            }
            if lock.withLock({ isCut }) { break }
            let allowed = budgeted ? spend(n) : n
            var sent = 0
            while sent < allowed {
                let m = buffer.withUnsafeBytes { send(sink, $0.baseAddress! + sent, allowed - sent, Int32(MSG_NOSIGNAL)) }
                if m <= 0 { return }
                sent += m
            }
            if allowed < n {
                flow.withLock { while budget != nil, !lock.withLock({ stopped }) { flow.wait() } }
                break
            }
        }
        shutdown(sink, Int32(SHUT_WR))
    }

    /// How many of `count` reply bytes the budget still allows, taken from it.
    private func spend(_ count: Int) -> Int {
        flow.withLock {
            guard let budget else { return count }
            let allowed = max(0, min(count, budget - delivered))
            delivered += allowed
            return allowed
        }
    }

    private func track(_ s: Int32) { _ = lock.withLock { open.insert(s) } }
    private func untrack(_ s: Int32) { _ = lock.withLock { open.remove(s) } }

    /// Both directions of one forwarded connection: closed once both are done.
    private final class Ends: @unchecked Sendable {
        private let lock = NSLock()
        private var remaining = 2
        private let client: Int32, upstream: Int32
        private weak var proxy: LoopbackProxy?

        init(_ client: Int32, _ upstream: Int32, proxy: LoopbackProxy) {
            self.client = client
            self.upstream = upstream
            self.proxy = proxy
        }

        func finish() {
            // The first direction to end takes the other down with it (a dropped link drops both ways).
            let last: Bool = lock.withLock {
                remaining -= 1
                return remaining == 0
            }
            if !last {
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(upstream, Int32(SHUT_RDWR))
                return
            }
            proxy?.untrack(client)
            proxy?.untrack(upstream)
            close(client)
            close(upstream)
        }
    }
}

import CCurl
import Foundation
import RaxxClient
import RaxxCore

/// One HTTP/2 request: a POST of `body` to `url` with `headers` ("name: value").
public struct HTTP2Request: Sendable {
    public var url: String
    public var headers: [String]
    public var body: [UInt8]

    public init(url: String, headers: [String], body: [UInt8]) {
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A server's answer to one stream.
public struct HTTP2Answer: Sendable, Equatable {
    public var status: Int
    /// Response headers, names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// What became of one stream: an answer, or no answer (classified as RaxxClient classifies libcurl's codes).
public enum HTTP2Outcome: Sendable {
    case answer(HTTP2Answer)
    case failure(TransportFailure)
}

/// Many POSTs multiplexed as HTTP/2 streams over TLS on a few connections, driven by libcurl's
/// multi interface on one thread of its own.
///
/// - At most `maxInFlight` transfers are in libcurl at once; the rest wait here, in order, and a
///   stream's timeout counts from when its request is actually being sent (libcurl asks for the
///   body), never while it waits for a slot. libcurl opens at most `connections` connections and
///   puts at most maxInFlight/connections streams on each, fewer when the server's
///   SETTINGS_MAX_CONCURRENT_STREAMS says so.
/// - A connection the server ends (GOAWAY) takes no new streams; libcurl resends refused streams
///   on a new connection, and anything else comes back as a failure for the caller to retry.
/// - Usable from any thread or task: `perform` suspends without blocking, `submit` calls back on
///   the engine's thread (keep the callback short).
public final class HTTP2Engine: @unchecked Sendable {
    public struct Options: Sendable {
        public var connections: Int
        public var maxInFlight: Int
        /// How long a started stream may go without its answer.
        public var streamTimeout: RaxxDuration
        public var connectTimeout: RaxxDuration
        /// A PEM file of the CA certificates to trust instead of the system's (a local endpoint).
        public var caFile: String?
        public var userAgent: String
        /// Answers larger than this are cut off and reported as failures (APNs answers are tiny).
        public var maxAnswerBytes: Int
        /// The answer's header fields to keep, in lower case; nil keeps every one.
        public var answerHeaders: [String]?

        public init(
            connections: Int = 1, maxInFlight: Int = 100, streamTimeout: RaxxDuration = .seconds(20),
            connectTimeout: RaxxDuration = .seconds(5), caFile: String? = nil, userAgent: String,
            maxAnswerBytes: Int = 64 << 10, answerHeaders: [String]? = nil
        ) {
            self.connections = connections
            self.maxInFlight = maxInFlight
            self.streamTimeout = streamTimeout
            self.connectTimeout = connectTimeout
            self.caFile = caFile
            self.userAgent = userAgent
            self.maxAnswerBytes = maxAnswerBytes
            self.answerHeaders = answerHeaders.map { $0.map { $0.lowercased() } }
        }
    }

    public let options: Options
    private let multi: UnsafeMutableRawPointer

    // Shared with submitters, under `lock`.
    private let lock = NSLock()
    private var waiting = FIFOQueue<Transfer>()
    private var woken = false
    private var stopping = false
    private var finished: [CheckedContinuation<Void, Never>] = []
    private var ended = false

    // The engine thread's own.
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private var lastTimeoutScan = ContinuousClock.now
    /// The last request's origin (its bytes up to the path's "/") and whether it is loopback.
    private var lastOrigin: (bytes: [UInt8], loopback: Bool)?
    /// The handles whose shared options are set, and whether for a loopback endpoint (no proxy).
    private var prepared: [UnsafeMutableRawPointer: Bool] = [:]
    /// Each handle's URL taken apart (`setURL`).
    private var urlParts: [UnsafeMutableRawPointer: URLParts] = [:]
    /// The end of every request's header list: libcurl's own defaults for a POST (a form content
    /// type, Accept, Expect) are not asked for.
    private let postDefaultsOff: UnsafeMutablePointer<curl_slist>
    /// The engine's connections, corked while libcurl works through a turn.
    private let sockets: UnsafeMutablePointer<raxx_curl_socket_set> = {
        let set = UnsafeMutablePointer<raxx_curl_socket_set>.allocate(capacity: 1)
        set.initialize(to: raxx_curl_socket_set())
        return set
    }()

    // The engine's thread holds the engine until it has cleaned libcurl's handles up, so the socket
    // set outlives every callback that uses it.
    deinit { sockets.deallocate() }

    /// Loads libcurl's multi interface and starts the engine's thread.
    public init(options: Options) throws(RaxxError) {
        guard raxx_curl_multi_available() == 1 else {
            let why = String(cString: raxx_curl_load_error())
            throw RaxxError(
                code: .libcurlUnavailable,
                message: "libcurl's multi interface could not be loaded\(why.isEmpty ? " (libcurl 7.68 or later is needed)" : ": \(why)").")
        }
        var tail: UnsafeMutablePointer<curl_slist>? = nil
        for line in ["Content-Type:", "Accept:", "Expect:"] {
            guard let list = raxx_curl_slist_append(tail, line) else {
                raxx_curl_slist_free_all(tail)
                throw RaxxError(code: .libcurlUnavailable, message: "libcurl could not make a header list.")
            }
            tail = list
        }
        guard let tail, let multi = raxx_curl_multi_init() else {
            raxx_curl_slist_free_all(tail)
            throw RaxxError(code: .libcurlUnavailable, message: "libcurl could not create a multi handle.")
        }
        postDefaultsOff = tail
        var options = options
        options.connections = max(1, options.connections)
        options.maxInFlight = max(1, options.maxInFlight)
        self.options = options
        self.multi = multi
        let streamsPerConnection = (options.maxInFlight + options.connections - 1) / options.connections
        let settings: [(CURLMoption, Int, String)] = [
            (CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX), "HTTP/2 multiplexing"),
            (CURLMOPT_MAX_HOST_CONNECTIONS, options.connections, "the connection limit"),
            (CURLMOPT_MAX_TOTAL_CONNECTIONS, options.connections, "the connection limit"),
            (CURLMOPT_MAXCONNECTS, options.connections, "the connection cache"),
            (CURLMOPT_MAX_CONCURRENT_STREAMS, streamsPerConnection, "the streams per connection"),
        ]
        for (option, value, what) in settings {
            let code = raxx_curl_multi_set_long(multi, option, value)
            guard code == CURLM_OK else {
                raxx_curl_multi_cleanup(multi)
                raxx_curl_slist_free_all(tail)
                throw RaxxError(code: .libcurlUnavailable, message: "libcurl refused \(what): \(String(cString: raxx_curl_multi_strerror(code))).")
            }
        }
        let thread = Thread { [self] in run() }
        thread.name = "raxx-http2"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Sends `request` and answers its outcome.
    public func perform(_ request: HTTP2Request) async -> HTTP2Outcome {
        await withCheckedContinuation { continuation in
            submit(request) { continuation.resume(returning: $0) }
        }
    }

    /// Sends `request`; `completion` runs once, on the engine's thread, with its outcome (never
    /// before this returns).
    public func submit(_ request: HTTP2Request, completion: @escaping @Sendable (HTTP2Outcome) -> Void) {
        let transfer = Transfer(
            request: request, maxAnswerBytes: options.maxAnswerBytes, answerHeaders: options.answerHeaders,
            completion: completion)
        let wake: Bool
        lock.lock()
        if stopping {
            lock.unlock()
            // Never before submit returns (its caller may submit again from the completion).
            Task { completion(.failure(TransportFailure(kind: .cancelled, detail: "the push engine was shut down"))) }
            return
        }
        waiting.append(transfer)
        wake = !woken
        woken = true
        lock.unlock()
        // A failed wakeup only delays the start: the engine polls at least once a second.
        if wake { _ = raxx_curl_multi_wakeup(multi) }
    }

    /// Transfers submitted and not yet answered.
    public var pendingCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return waiting.count + activeCount
    }
    private var activeCount = 0  // mirrored under `lock` by the engine thread

    /// Lets what was submitted finish, then ends the thread and frees libcurl's handles.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if ended {
                lock.unlock()
                continuation.resume()
                return
            }
            stopping = true
            finished.append(continuation)
            lock.unlock()
            _ = raxx_curl_multi_wakeup(multi)  // (or seen within a second)
        }
    }

    // MARK: The engine's thread

    private func run() {
        while true {
            let (admitted, done) = admit()
            for transfer in admitted { start(transfer) }
            if done { break }
            perform()
            // The answers read are settled a batch at a time, and what their completions submitted
            // is sent before the next batch: the endpoint gets new streams while the rest settle.
            while collectFinished(atMost: Self.settleBatch) == Self.settleBatch {
                let (admitted, _) = admit()
                guard !admitted.isEmpty else { continue }
                for transfer in admitted { start(transfer) }
                perform()
            }
            scanTimeouts()
            lock.lock()
            activeCount = active.count
            let idle = waiting.isEmpty
            lock.unlock()
            // What the answers' completions submitted goes out in the next turn, without a poll.
            if !idle && active.count < options.maxInFlight { continue }
            var fds: Int32 = 0
            // Woken at once by submit() and shutdown(); a tenth of a second bounds how late a timeout is seen.
            let polled = raxx_curl_multi_poll(multi, active.isEmpty && idle ? 1000 : 100, &fds)
            if polled != CURLM_OK {
                failAll("libcurl's multi interface failed: \(String(cString: raxx_curl_multi_strerror(polled)))")
            }
        }
        for handle in idleHandles { discard(handle) }
        idleHandles.removeAll()
        raxx_curl_multi_cleanup(multi)
        raxx_curl_slist_free_all(postDefaultsOff)
        lock.lock()
        ended = true
        let waiters = finished
        finished.removeAll()
        lock.unlock()
        for waiter in waiters { waiter.resume() }
    }

    /// How many answers are settled before what their completions submitted is sent. Settling all
    /// of a turn's answers first (a hundred and more) left the endpoint idle meanwhile: 16 at a time
    /// took `Scripts/bench notify` from about 0.65x h2load to 0.75-0.95x (28 % more pushes a second).
    static let settleBatch = 16

    /// One turn of libcurl's: what it writes (a frame a send) leaves in full segments when it ends.
    private func perform() {
        var running: Int32 = 0
        raxx_curl_socket_set_cork(sockets, 1)
        let performed = raxx_curl_multi_perform(multi, &running)
        if performed != CURLM_OK && performed != CURLM_CALL_MULTI_PERFORM {
            failAll("libcurl's multi interface failed: \(String(cString: raxx_curl_multi_strerror(performed)))")
        }
        raxx_curl_socket_set_cork(sockets, 0)
    }

    /// The waiting transfers that fit under the in-flight cap; `done` once stopping with nothing left.
    private func admit() -> (admitted: [Transfer], done: Bool) {
        lock.lock()
        defer { lock.unlock() }
        woken = false
        var admitted: [Transfer] = []
        while active.count + admitted.count < options.maxInFlight, let transfer = waiting.popFirst() {
            admitted.append(transfer)
        }
        let done = stopping && admitted.isEmpty && active.isEmpty && waiting.isEmpty
        return (admitted, done)
    }

    private func start(_ transfer: Transfer) {
        guard let handle = idleHandles.popLast() ?? raxx_curl_easy_init() else {
            transfer.finish(.failure(TransportFailure(kind: .other, detail: "libcurl could not create a handle")))
            return
        }
        do {
            try configure(handle, for: transfer)
        } catch {
            recycle(handle, of: transfer, reset: true)
            transfer.finish(.failure(error as? TransportFailure ?? TransportFailure(kind: .other, detail: "\(error)")))
            return
        }
        let added = raxx_curl_multi_add_handle(multi, handle)
        guard added == CURLM_OK else {
            recycle(handle, of: transfer, reset: true)
            transfer.finish(
                .failure(TransportFailure(kind: .other, detail: "libcurl refused the transfer: \(String(cString: raxx_curl_multi_strerror(added)))")))
            return
        }
        active[handle] = transfer
    }

    /// Sets `handle` up for `transfer`. A handle keeps what every transfer shares (callbacks,
    /// HTTP/2, TLS, timeouts) from one transfer to the next; only what is the transfer's own is set
    /// each time (setting everything again cost about as much as the rest of a push's handling).
    private func configure(_ handle: UnsafeMutableRawPointer, for transfer: Transfer) throws {
        func set(_ result: CURLcode, _ what: String) throws { try CurlOptions.check(result, what) }
        let loopback = isLoopback(transfer.request.url)
        if prepared[handle] != loopback {
            if prepared.removeValue(forKey: handle) != nil { raxx_curl_easy_reset(handle) }
            try prepare(handle, for: transfer, loopback: loopback)
            prepared[handle] = loopback
        }
        let me = Unmanaged.passUnretained(transfer).toOpaque()
        try setURL(of: handle, to: transfer.request.url)
        try set(raxx_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer), "the error buffer")
        try set(raxx_curl_set_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(transfer.request.body.count)), "the body size")
        try set(raxx_curl_set_pointer(handle, CURLOPT_READDATA, me), "the body callback's data")
        try set(raxx_curl_set_pointer(handle, CURLOPT_SEEKDATA, me), "the rewind callback's data")
        try set(raxx_curl_set_pointer(handle, CURLOPT_WRITEDATA, me), "the answer callback's data")
        try set(raxx_curl_set_pointer(handle, CURLOPT_HEADERDATA, me), "the header callback's data")

        transfer.freeHeaderList()
        try set(raxx_curl_set_slist(handle, CURLOPT_HTTPHEADER, transfer.layOutHeaderList(then: postDefaultsOff)), "the headers")
    }

    /// What every transfer on `handle` shares; the callbacks find their transfer in their data pointer.
    private func prepare(_ handle: UnsafeMutableRawPointer, for transfer: Transfer, loopback: Bool) throws {
        func set(_ result: CURLcode, _ what: String) throws { try CurlOptions.check(result, what) }
        // The stream's own timeout is the engine's (from when it is sent); libcurl's total timeout
        // only bounds a transfer it never starts.
        let backstop = max(options.streamTimeout.milliseconds * 4, options.connectTimeout.milliseconds + options.streamTimeout.milliseconds, 60_000)
        try CurlOptions.setBaseline(
            handle, url: transfer.request.url, protocols: "https", connectTimeout: options.connectTimeout,
            totalTimeoutMilliseconds: Int(backstop), userAgent: options.userAgent, errorBuffer: transfer.errorBuffer)
        try set(raxx_curl_set_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)), "HTTP/2")
        try set(raxx_curl_set_long(handle, CURLOPT_PIPEWAIT, 1), "waiting to multiplex")
        try set(raxx_curl_track_sockets(handle, sockets), "the socket callbacks")
        if loopback {
            try set(raxx_curl_set_string(handle, CURLOPT_PROXY, ""), "no proxy for loopback")
        }
        if let caFile = options.caFile { try set(raxx_curl_set_string(handle, CURLOPT_CAINFO, caFile), "the CA file") }
        try set(raxx_curl_set_long(handle, CURLOPT_POST, 1), "POST")
        try set(
            raxx_curl_set_data_fn(handle, CURLOPT_READFUNCTION) { buffer, size, count, user in
                let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
                if transfer.startedAt == nil { transfer.startedAt = .now }
                let n = min(size * count, transfer.request.body.count - transfer.offset)
                if n > 0, let buffer {
                    transfer.request.body.withUnsafeBytes { body in
                        UnsafeMutableRawPointer(buffer).copyMemory(from: body.baseAddress! + transfer.offset, byteCount: n)
                    }
                    transfer.offset += n
                }
                return n
            }, "the body callback")
        try set(
            raxx_curl_set_seek_fn(handle) { user, offset, origin in
                let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
                guard origin == SEEK_SET, offset >= 0, Int(offset) <= transfer.request.body.count else { return 2 }  // CURL_SEEKFUNC_CANTSEEK
                transfer.offset = Int(offset)
                transfer.responseBody.removeAll()
                transfer.headers.removeAll()
                return 0  // CURL_SEEKFUNC_OK
            }, "the rewind callback")
        try set(
            raxx_curl_set_data_fn(handle, CURLOPT_WRITEFUNCTION) { ptr, size, count, user in
                let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
                let n = size * count
                guard transfer.responseBody.count + n <= transfer.maxAnswerBytes else {
                    transfer.tooLarge = true
                    return 0
                }
                if let ptr { transfer.responseBody.append(contentsOf: UnsafeRawBufferPointer(start: ptr, count: n)) }
                return n
            }, "the body callback")
        try set(
            raxx_curl_set_data_fn(handle, CURLOPT_HEADERFUNCTION) { ptr, size, count, user in
                let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
                let n = size * count
                guard let ptr else { return n }
                switch CurlHeaderLine(UnsafeRawBufferPointer(start: ptr, count: n), keeping: transfer.answerHeaders) {
                case .status: transfer.headers.removeAll()  // a new (final) answer's
                case .field(let name, let value) where transfer.headers.count < 64:
                    // Kept names are lower case, and HTTP/2's are already.
                    let lower = transfer.answerHeaders != nil || !name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A })
                    transfer.headers[lower ? name : name.lowercased()] = value
                case .field, .other: break
                }
                return n
            }, "the header callback")
    }

    /// Gives `handle` the transfer's URL twice: as text (CURLOPT_URL, what libcurl reports) and
    /// taken apart (CURLOPT_CURLU, what it connects to and sends). Given the text alone, libcurl
    /// parsed it, put it back together and took it apart again for every transfer (7 % of a push's
    /// instructions). Each handle keeps a URL handle holding its last origin; a URL to the same
    /// origin whose path is plain (letters, digits, "-", "_", "~" and "/": nothing a parser would
    /// read otherwise, as dots, escapes, a query or a fragment) changes only the path. Any other
    /// URL is parsed whole, and one libcurl's parser refuses is left to libcurl, as before.
    private func setURL(of handle: UnsafeMutableRawPointer, to url: String) throws {
        func set(_ result: CURLcode, _ what: String) throws { try CurlOptions.check(result, what) }
        try set(raxx_curl_set_string(handle, CURLOPT_URL, url), "the URL")
        let parts: URLParts
        if let kept = urlParts[handle] {
            parts = kept
        } else {
            guard let made = URLParts() else { throw TransportFailure(kind: .other, detail: "libcurl could not create a URL handle") }
            parts = made
            urlParts[handle] = parts
        }
        var url = url
        try set(raxx_curl_set_pointer(handle, CURLOPT_CURLU, url.withUTF8 { parts.take($0) }), "the URL's parts")
    }

    /// Cleans `handle` up, with its URL handle.
    private func discard(_ handle: UnsafeMutableRawPointer) {
        prepared[handle] = nil
        raxx_curl_easy_cleanup(handle)
        urlParts[handle] = nil
    }

    /// Whether `url`'s host is a loopback address, remembered for the last request's scheme and
    /// authority (a run sends every request to one endpoint; parsing each URL again cost more than
    /// the answer, and looking its origin up in a table, 0.7 % of a push).
    private func isLoopback(_ url: String) -> Bool {
        var url = url
        return url.withUTF8 { bytes in
            if let last = lastOrigin, URLOrigin.url(bytes, isOn: last.bytes) { return last.loopback }
            let loopback = URL(string: String(decoding: bytes, as: UTF8.self))?.host.map { APIEndpoint.isLoopback(host: $0) } ?? false
            lastOrigin = URLOrigin.end(of: bytes).map { (Array(bytes[..<$0]), loopback) }
            return loopback
        }
    }

    /// Settles up to `limit` finished transfers; answers how many.
    @discardableResult
    private func collectFinished(atMost limit: Int = .max) -> Int {
        var easy: UnsafeMutableRawPointer? = nil
        var result = CURLE_OK
        var settled = 0
        while settled < limit, raxx_curl_multi_next_done(multi, &easy, &result) == 1 {
            settled += 1
            guard let handle = easy, let transfer = active.removeValue(forKey: handle) else { continue }
            let outcome: HTTP2Outcome
            if result == CURLE_OK {
                var status = 0
                var version = 0
                if raxx_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK
                    || raxx_curl_get_long(handle, CURLINFO_HTTP_VERSION, &version) != CURLE_OK || status < 100
                {
                    outcome = .failure(TransportFailure(kind: .other, detail: "libcurl could not tell the answer's status"))
                } else if version != Int(CURL_HTTP_VERSION_2_0) {
                    outcome = .failure(TransportFailure(kind: .policy, detail: "the endpoint did not answer over HTTP/2"))
                } else {
                    outcome = .answer(HTTP2Answer(status: status, headers: transfer.headers, body: transfer.responseBody))
                }
            } else if transfer.tooLarge {
                outcome = .failure(
                    TransportFailure(
                        kind: .other, curlCode: Int(result.rawValue),
                        detail: "the answer is larger than \(options.maxAnswerBytes) bytes"))
            } else {
                let message = String(cString: transfer.errorBuffer)
                let number = Int(result.rawValue)
                outcome = .failure(
                    TransportFailure(
                        kind: TransportFailure.kind(forCurlCode: number), curlCode: number,
                        detail: message.isEmpty ? String(cString: raxx_curl_easy_strerror(result)) : message))
            }
            retire(handle, of: transfer)
            transfer.finish(outcome)
        }
        return settled
    }

    /// Ends the streams that were sent and have waited longer than the timeout for their answer.
    private func scanTimeouts() {
        let now = ContinuousClock.now
        guard now - lastTimeoutScan >= .milliseconds(50) else { return }
        lastTimeoutScan = now
        let limit = Duration.milliseconds(options.streamTimeout.milliseconds)
        for (handle, transfer) in active {
            guard let started = transfer.startedAt, now - started > limit else { continue }
            active[handle] = nil
            retire(handle, of: transfer)
            transfer.finish(
                .failure(
                    TransportFailure(
                        kind: .offlineSoft, curlCode: Int(CURLE_OPERATION_TIMEDOUT.rawValue),
                        detail: "no answer within \(options.streamTimeout) of sending")))
        }
    }

    private func failAll(_ detail: String) {
        for (handle, transfer) in active {
            retire(handle, of: transfer)
            transfer.finish(.failure(TransportFailure(kind: .other, detail: detail)))
        }
        active.removeAll()
    }

    /// Takes `handle` out of the multi handle; one libcurl will not let go of is not used again.
    private func retire(_ handle: UnsafeMutableRawPointer, of transfer: Transfer) {
        guard raxx_curl_multi_remove_handle(multi, handle) == CURLM_OK else {
            transfer.leakHeaderList()
            prepared[handle] = nil
            if let parts = urlParts.removeValue(forKey: handle) { _ = Unmanaged.passRetained(parts) }
            return  // the handle, its headers and URL leaked rather than reused or freed while libcurl may hold them
        }
        recycle(handle, of: transfer)
    }

    /// Keeps `handle` (not in the multi handle) for the next transfer; `reset` forgets its options
    /// (after a set-up that failed half-way).
    private func recycle(_ handle: UnsafeMutableRawPointer, of transfer: Transfer, reset: Bool = false) {
        if reset {
            raxx_curl_easy_reset(handle)
            prepared[handle] = nil
        }
        transfer.freeHeaderList()
        if idleHandles.count < options.maxInFlight {
            idleHandles.append(handle)
        } else {
            discard(handle)
        }
    }
}

/// A URL's origin as the engine remembers it: its scheme and authority, the bytes up to its path's "/".
enum URLOrigin {
    /// Where `url`'s path starts: its first "/" after the scheme's "//"; nil when it has no path.
    static func end(of url: UnsafeBufferPointer<UInt8>) -> Int? {
        var slashes = 0
        return url.firstIndex { byte in
            if byte == UInt8(ascii: "/") { slashes += 1 }
            return slashes == 3
        }
    }

    /// Whether `url` is `origin` (not empty) followed by a path.
    static func url(_ url: UnsafeBufferPointer<UInt8>, isOn origin: [UInt8]) -> Bool {
        let count = origin.count
        guard count > 0, url.count > count, url[count] == UInt8(ascii: "/") else { return false }
        return origin.withUnsafeBytes { memcmp(url.baseAddress!, $0.baseAddress!, count) == 0 }
    }
}

/// A libcurl URL handle (CURLU), owned, and the origin it holds (the scheme and authority, up to
/// the path's "/") when its path may be set alone: empty when its last URL had no path, or one
/// that is not plain. Used on one thread at a time.
final class URLParts {
    private let url: OpaquePointer
    private var origin: [UInt8] = []

    /// Nil when libcurl's multi interface (with its URL API) is not loaded, or out of memory.
    init?() {
        guard raxx_curl_multi_available() == 1, let url = raxx_curl_url_new() else { return nil }
        self.url = url
    }

    deinit { raxx_curl_url_free(url) }

    /// Sets the URL to `text`; answers the handle, for CURLOPT_CURLU, or nil when libcurl's parser
    /// refused the URL.
    func take(_ text: UnsafeBufferPointer<UInt8>) -> UnsafeMutableRawPointer? {
        let count = origin.count
        if URLOrigin.url(text, isOn: origin), Self.isPlainPath(UnsafeBufferPointer(rebasing: text[count...])) {
            return set(CURLUPART_PATH, UnsafeBufferPointer(rebasing: text[count...])) ? UnsafeMutableRawPointer(url) : nil
        }
        origin = []
        guard set(CURLUPART_URL, text) else { return nil }
        if let end = URLOrigin.end(of: text), Self.isPlainPath(UnsafeBufferPointer(rebasing: text[end...])) {
            origin = Array(text[..<end])
        }
        return UnsafeMutableRawPointer(url)
    }

    /// The URL as libcurl puts it back together from its parts.
    var text: String? {
        guard let copy = raxx_curl_url_copy(url, CURLUPART_URL) else { return nil }
        defer { raxx_curl_free(copy) }
        return String(cString: copy)
    }

    /// Letters, digits, "-", "_", "~" and "/" only.
    static func isPlainPath(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
        path.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }

    /// curl_url_set of `part` to `text` (copied to the stack with its terminating NUL).
    private func set(_ part: CURLUPart, _ text: UnsafeBufferPointer<UInt8>) -> Bool {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { buffer in
            UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: text.baseAddress!, byteCount: text.count)
            buffer[text.count] = 0
            return raxx_curl_url_set(url, part, buffer.baseAddress!) == CURLUE_OK
        }
    }
}

/// One request in flight and its answer as libcurl's callbacks fill it in (on the engine's thread only).
private final class Transfer {
    let request: HTTP2Request
    private var completion: (@Sendable (HTTP2Outcome) -> Void)?
    let maxAnswerBytes: Int
    let answerHeaders: [String]?
    var offset = 0
    var startedAt: ContinuousClock.Instant?
    var headers: [String: String] = [:]
    var responseBody: [UInt8] = []
    var tooLarge = false
    /// The request's header lines as libcurl reads them (a `curl_slist`), in one allocation.
    private var headerBlock: UnsafeMutableRawPointer?
    let errorBuffer: UnsafeMutablePointer<CChar>

    init(request: HTTP2Request, maxAnswerBytes: Int, answerHeaders: [String]?, completion: @escaping @Sendable (HTTP2Outcome) -> Void) {
        self.request = request
        self.maxAnswerBytes = maxAnswerBytes
        self.answerHeaders = answerHeaders
        self.completion = completion
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    func finish(_ outcome: HTTP2Outcome) {
        let completion = self.completion
        self.completion = nil
        completion?(outcome)
    }

    /// Lays the request's header lines out as a `curl_slist` in one allocation (not a node and a
    /// copy of each line, as `curl_slist_append` makes), ending in `tail`; answers its head.
    func layOutHeaderList(then tail: UnsafeMutablePointer<curl_slist>) -> UnsafeMutablePointer<curl_slist> {
        freeHeaderList()
        let lines = request.headers
        guard !lines.isEmpty else { return tail }
        let nodes = lines.count * MemoryLayout<curl_slist>.stride
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: nodes + lines.reduce(0) { $0 + $1.utf8.count + 1 },
            alignment: MemoryLayout<curl_slist>.alignment)
        headerBlock = block
        let list = block.bindMemory(to: curl_slist.self, capacity: lines.count)
        var text = (block + nodes).bindMemory(to: CChar.self, capacity: 1)
        for (index, line) in lines.enumerated() {
            var line = line
            let count = line.withUTF8 { utf8 in
                UnsafeMutableRawPointer(text).copyMemory(from: utf8.baseAddress!, byteCount: utf8.count)
                return utf8.count
            }
            text[count] = 0
            (list + index).initialize(to: curl_slist(data: text, next: index + 1 < lines.count ? list + index + 1 : tail))
            text += count + 1
        }
        return list
    }

    func freeHeaderList() {
        headerBlock?.deallocate()
        headerBlock = nil
    }

    /// Forgets the header list without freeing it (libcurl may still hold it).
    func leakHeaderList() {
        headerBlock = nil
    }

    deinit {
        freeHeaderList()
        errorBuffer.deallocate()
    }
}

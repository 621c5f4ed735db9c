import CCurl
import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxCore
import Synchronization

/// An OpenAPIRuntime `ClientTransport` on libcurl.
///
/// - HTTPS by default; plain http only to loopback hosts (checked for every request, whatever the
///   base URL). No redirects are followed.
/// - Connect and total timeouts; a User-Agent naming the tool and version.
/// - Failures are thrown as `TransportFailure`, classified offline-hard / offline-soft / other.
/// - An answer is read up to its operation's ceiling (`AnswerCeiling`), no further: past it the
///   transfer is stopped and fails as `.tooLarge`, whether the answer said its length or not.
/// - Easy handles are pooled so that connections are kept alive between requests.
public final class CurlTransport: ClientTransport, Sendable {
    public struct Options: Sendable {
        public var connectTimeout: RaxxDuration
        public var totalTimeout: RaxxDuration
        public var userAgent: String
        public var maxRequestBytes: Int
        /// Where each exchange is traced (`RAXX_DEBUG=api`), if anywhere.
        public var trace: APITrace?

        public init(
            connectTimeout: RaxxDuration = RaxxConfiguration.defaultConnectTimeout,
            totalTimeout: RaxxDuration = RaxxConfiguration.defaultTotalTimeout,
            userAgent: String,
            maxRequestBytes: Int = 16 << 20,
            trace: APITrace? = nil
        ) {
            self.connectTimeout = connectTimeout
            self.totalTimeout = totalTimeout
            self.userAgent = userAgent
            self.maxRequestBytes = maxRequestBytes
            self.trace = trace
        }
    }

    public let options: Options
    private let pool = HandlePool()
    /// The base URL of the last request and what was decided of it: every request of a run goes to
    /// one server, whose URL was parsed and checked again for each of them (a tenth of the request
    /// thread's work for a batch of orders).
    private let lastEndpoint = Mutex<Endpoint?>(nil)

    /// Loads nothing: libcurl is loaded by the first request.
    public init(options: Options) {
        self.options = options
    }

    /// Starts loading libcurl (and the libraries it links) on another thread, for a command whose
    /// first request comes after local work (a database opened): the load, tens of milliseconds,
    /// overlaps that work instead of delaying the request. The first request waits for it as
    /// before when it is not done.
    public static func preload() {
        DispatchQueue.global(qos: .userInitiated).async { _ = CurlLibrary.load() }
    }

    /// Before the process exits: waits for a load of libcurl begun on another thread (`preload`)
    /// to finish, and keeps any later one from beginning. exit() tearing OpenSSL down while
    /// curl_global_init initialises it on another thread crashes the process.
    public static func settle() {
        raxx_curl_settle()
    }

    /// "raxx-order/0.1.0 libcurl/7.88.1" (libcurl's version once it is loaded).
    public static func userAgent(tool: String) -> String {
        guard CurlLibrary.load() == nil else { return "\(tool)/\(RaxxVersion.current)" }
        return "\(tool)/\(RaxxVersion.current) libcurl/\(String(cString: raxx_curl_version()))"
    }

    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String)
        async throws -> (HTTPResponse, HTTPBody?)
    {
        let (url, bypassesProxy) = try requestURL(for: request, baseURL: baseURL)
        var bodyBytes: [UInt8]? = nil
        if let body {
            bodyBytes = try await Array(collecting: body, upTo: options.maxRequestBytes)
        }
        var options = self.options
        // A request that says how long it may take (a long poll) is not cut by the default.
        if let total = RequestTimeout.total { options.totalTimeout = total }
        let exchange = Exchange(
            request: request, url: url, bypassesProxy: bypassesProxy, body: bodyBytes, options: options,
            operationID: operationID)
        let pool = self.pool
        return try await withTaskCancellationHandler {
            // A task on a lane of its own (InPlaceRequests.run) blocks its own thread, which nothing
            // else is waiting for: no hand-over to another thread and back.
            if InPlaceRequests.isCurrent { return try exchange.perform(using: pool) }
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(HTTPResponse, HTTPBody?), any Error>) in
                // libcurl's easy interface blocks: run it on Dispatch's pooled threads, never on the
                // cooperative pool (and not a new thread per request: each would grow its own
                // malloc arena).
                DispatchQueue.global(qos: .userInitiated).async {
                    continuation.resume(with: Result { try exchange.perform(using: pool) })
                }
            }
        } onCancel: {
            exchange.cancel()
        }
    }

    /// The request's URL, and whether it must not go through a proxy (`CurlOptions.bypassesProxy`):
    /// the base URL's part decided once for as long as requests go to it.
    func requestURL(for request: HTTPRequest, baseURL: URL) throws -> (url: String, bypassesProxy: Bool) {
        let path = request.path ?? "/"
        let endpoint: Endpoint
        if let known = lastEndpoint.withLock({ $0 }), known.baseURL == baseURL {
            endpoint = known
        } else {
            endpoint = try Endpoint(baseURL)
            lastEndpoint.withLock { $0 = endpoint }
        }
        let url = endpoint.base + path
        // A path that does not start at the root could change the host as it is read: decided again.
        return (url, path.hasPrefix("/") ? endpoint.bypassesProxy : CurlOptions.bypassesProxy(url))
    }

    /// A base URL checked against the scheme policy: https, or plain http to a loopback host.
    struct Endpoint: Sendable {
        let baseURL: URL
        /// Its text without a trailing "/", to which a request's path is joined.
        let base: String
        let bypassesProxy: Bool

        init(_ baseURL: URL) throws {
            guard let scheme = baseURL.scheme?.lowercased(), let host = baseURL.host else {
                throw TransportFailure(kind: .policy, detail: "not a server URL: \(baseURL)")
            }
            switch scheme {
            case "https": break
            case "http" where APIEndpoint.isLoopback(host: host): break
            case "http": throw TransportFailure(kind: .policy, detail: "plain http is only allowed to loopback hosts, not \(host)")
            default: throw TransportFailure(kind: .policy, detail: "unsupported scheme \(scheme)")
            }
            var base = baseURL.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            self.baseURL = baseURL
            self.base = base
            bypassesProxy = CurlOptions.bypassesProxy(base + "/")
        }
    }
}

/// Requests made one after another by one task, on a thread of its own: libcurl blocks that thread
/// (nothing else runs on it) instead of each request handing its transfer to a pooled thread and
/// taking the answer back from it — two thread wake-ups per request, tens of microseconds each on
/// a busy machine, which a batch of orders pays a thousand times.
public enum InPlaceRequests {
    /// The lane, for the tasks that `run` runs (task-local: a task they start elsewhere is not on
    /// it, and `isCurrent` says so).
    @TaskLocal static var lane: DedicatedThread?

    /// One lane for the process, started at the first `run` and parked between batches.
    private static let shared = DedicatedThread(name: "raxx-requests")

    /// Runs `body` (and its child tasks) on the lane, where the transport performs requests in place.
    /// For sequential work only: everything `body` does waits its turn on the one thread.
    public static func run<T>(_ body: () async -> T) async -> T {
        let lane = shared
        return await lane.run {
            await $lane.withValue(lane) { await body() }
        }
    }

    /// Whether this code runs on the lane now, for a task `run` runs.
    public static var isCurrent: Bool {
        lane?.isCurrent ?? false
    }
}

/// How long the requests made within an operation may take, in place of the transport's default:
/// `RequestTimeout.$total.withValue(.seconds(75)) { try await api.listEvents(…wait: 60…) }`.
public enum RequestTimeout {
    @TaskLocal public static var total: RaxxDuration?
}

/// libcurl, loaded and initialised (curl_global_init) once per process, at the first request.
enum CurlLibrary {
    /// Nil when libcurl is ready; otherwise the failure that every request answers.
    static func load() -> TransportFailure? {
        guard raxx_curl_load() == 0 else { return nil }
        return TransportFailure(kind: .other, detail: "libcurl could not be loaded: \(String(cString: raxx_curl_load_error()))")
    }
}

/// Owns libcurl easy handles; a handle returned to the pool keeps its connection cache.
final class HandlePool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [UnsafeMutableRawPointer] = []

    /// A handle (libcurl must be loaded: only `Exchange.perform` takes one, after `CurlLibrary.load`).
    func take() -> UnsafeMutableRawPointer? {
        lock.lock()
        defer { lock.unlock() }
        if let h = idle.popLast() { return h }
        return raxx_curl_easy_init()
    }

    func give(_ handle: UnsafeMutableRawPointer) {
        raxx_curl_easy_reset(handle)
        lock.lock()
        defer { lock.unlock() }
        if idle.count < 4 { idle.append(handle); return }
        raxx_curl_easy_cleanup(handle)
    }

    deinit {
        for h in idle { raxx_curl_easy_cleanup(h) }
    }
}

/// One request and its answer, as libcurl's callbacks fill it in.
final class Exchange: @unchecked Sendable {
    let request: HTTPRequest
    let url: String
    let bypassesProxy: Bool
    let body: [UInt8]?
    let options: CurlTransport.Options
    let operationID: String
    /// The most of the answer's body that is read (`AnswerCeiling`).
    let ceiling: Int

    // Written by libcurl's callbacks on the transfer thread only.
    var responseBody: [UInt8] = []
    /// The answer's header fields, as libcurl hands them over (CurlHeaderLine).
    var headerFields: [(name: String, value: String)] = []
    var tooLarge = false

    private let cancelLock = NSLock()
    private var cancelledFlag = false

    init(request: HTTPRequest, url: String, bypassesProxy: Bool, body: [UInt8]?, options: CurlTransport.Options, operationID: String) {
        self.request = request
        self.url = url
        self.bypassesProxy = bypassesProxy
        self.body = body
        self.options = options
        self.operationID = operationID
        ceiling = AnswerCeiling.bytes(for: operationID)
    }

    func cancel() {
        cancelLock.lock(); cancelledFlag = true; cancelLock.unlock()
    }

    var isCancelled: Bool {
        cancelLock.lock(); defer { cancelLock.unlock() }
        return cancelledFlag
    }

    /// The exchange, traced when the options say so.
    func perform(using pool: HandlePool) throws -> (HTTPResponse, HTTPBody?) {
        guard let trace = options.trace else { return try performUntraced(using: pool) }
        trace.request(operationID: operationID, method: request.method.rawValue, url: url, fields: request.headerFields, body: body)
        let started = ContinuousClock.now
        do {
            let answer = try performUntraced(using: pool)
            trace.response(
                operationID: operationID, status: answer.0.status.code, fields: headerFields, body: responseBody,
                elapsed: .now - started)
            return answer
        } catch let failure as TransportFailure {
            trace.failure(failure.detail, elapsed: .now - started)
            throw failure
        } catch {
            trace.failure(String(describing: error), elapsed: .now - started)
            throw error
        }
    }

    private func performUntraced(using pool: HandlePool) throws -> (HTTPResponse, HTTPBody?) {
        if let failure = CurlLibrary.load() { throw failure }
        guard let handle = pool.take() else {
            throw TransportFailure(kind: .other, detail: "libcurl could not create a handle")
        }
        defer { pool.give(handle) }
        var headers: UnsafeMutablePointer<curl_slist>? = nil
        defer { raxx_curl_slist_free_all(headers) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        let me = Unmanaged.passUnretained(self).toOpaque()
        let code: CURLcode = try errorBuffer.withUnsafeMutableBufferPointer { errbuf in
            func set(_ result: CURLcode, _ option: String) throws { try CurlOptions.check(result, option) }
            try CurlOptions.setBaseline(
                handle, url: url, protocols: "http,https", connectTimeout: options.connectTimeout,
                totalTimeoutMilliseconds: Int(options.totalTimeout.milliseconds), userAgent: options.userAgent,
                errorBuffer: errbuf.baseAddress)
            // Plain http goes to loopback only, and never through a proxy (http_proxy would carry the
            // bearer token in the clear to it); https keeps honouring the proxy variables.
            if bypassesProxy { try set(raxx_curl_set_string(handle, CURLOPT_PROXY, ""), "no proxy for loopback") }
            try set(raxx_curl_set_long(handle, CURLOPT_TCP_KEEPALIVE, 1), "keep-alive")

            // Method and body.
            let method = request.method.rawValue
            if let body {
                try set(raxx_curl_set_long(handle, CURLOPT_POST, 1), "POST")
                try set(raxx_curl_set_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "the body size")
                // COPYPOSTFIELDS copies, so the buffer need not outlive this call.
                try set(
                    body.withUnsafeBufferPointer { b in
                        b.baseAddress.map { raxx_curl_set_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0)) }
                            ?? raxx_curl_set_string(handle, CURLOPT_COPYPOSTFIELDS, "")
                    }, "the body")
                if method != "POST" { try set(raxx_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method), "the method") }
            } else if method == "HEAD" {
                try set(raxx_curl_set_long(handle, CURLOPT_NOBODY, 1), "HEAD")
            } else if method != "GET" {
                try set(raxx_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method), "the method")
            } else {
                try set(raxx_curl_set_long(handle, CURLOPT_HTTPGET, 1), "GET")
            }

            // Headers: the request's own, and no "Expect: 100-continue" round trip.
            for field in request.headerFields {
                headers = raxx_curl_slist_append(headers, "\(field.name.rawName): \(field.value)")
            }
            headers = raxx_curl_slist_append(headers, "Expect:")
            try set(raxx_curl_set_slist(handle, CURLOPT_HTTPHEADER, headers), "the headers")

            // The ceiling: an answer that says it is longer is refused before its body is read
            // (CURLE_FILESIZE_EXCEEDED); one that does not (chunked, or until the connection
            // closes) is stopped by the body callback once it passes the ceiling.
            try set(raxx_curl_set_off(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(ceiling)), "the answer's ceiling")

            // Callbacks.
            try set(
                raxx_curl_set_data_fn(handle, CURLOPT_WRITEFUNCTION) { ptr, size, count, user in
                    let exchange = Unmanaged<Exchange>.fromOpaque(user!).takeUnretainedValue()
                    let n = size * count
                    if exchange.responseBody.count + n > exchange.ceiling {
                        // Fewer bytes taken than given: libcurl stops the transfer (CURLE_WRITE_ERROR).
                        exchange.tooLarge = true
                        return 0
                    }
                    if let ptr { exchange.responseBody.append(contentsOf: UnsafeRawBufferPointer(start: ptr, count: n)) }
                    return n
                }, "the body callback")
            try set(raxx_curl_set_pointer(handle, CURLOPT_WRITEDATA, me), "the body callback's data")
            try set(
                raxx_curl_set_data_fn(handle, CURLOPT_HEADERFUNCTION) { ptr, size, count, user in
                    let exchange = Unmanaged<Exchange>.fromOpaque(user!).takeUnretainedValue()
                    let n = size * count
                    guard let ptr else { return n }
                    switch CurlHeaderLine(UnsafeRawBufferPointer(start: ptr, count: n)) {
                    case .status: exchange.headerFields.removeAll()
                    case .field(let name, let value):
                        exchange.headerFields.append((name, value))
                        // A large answer's buffer is sized once, not doubled (and copied) as it arrives.
                        if name.lowercased() == "content-length", let length = Int(value), length > 0, length <= exchange.ceiling {
                            exchange.responseBody.reserveCapacity(length)
                        }
                    case .other: break
                    }
                    return n
                }, "the header callback")
            try set(raxx_curl_set_pointer(handle, CURLOPT_HEADERDATA, me), "the header callback's data")
            try set(raxx_curl_set_long(handle, CURLOPT_NOPROGRESS, 0), "progress callbacks")
            try set(
                raxx_curl_set_xferinfo_fn(handle) { user, _, _, _, _ in
                    Unmanaged<Exchange>.fromOpaque(user!).takeUnretainedValue().isCancelled ? 1 : 0
                }, "the cancellation callback")
            try set(raxx_curl_set_pointer(handle, CURLOPT_XFERINFODATA, me), "the cancellation callback's data")

            if isCancelled { return CURLE_ABORTED_BY_CALLBACK }
            return raxx_curl_easy_perform(handle)
        }

        guard code == CURLE_OK else {
            if tooLarge || code == CURLE_FILESIZE_EXCEEDED {
                throw TransportFailure(
                    kind: .tooLarge, curlCode: Int(code.rawValue),
                    detail: "the answer is larger than \(ceiling) bytes, the most read of \(operationID)'s")
            }
            let message = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let detail = message.isEmpty ? String(cString: raxx_curl_easy_strerror(code)) : message
            let number = Int(code.rawValue)
            throw TransportFailure(kind: TransportFailure.kind(forCurlCode: number), curlCode: number, detail: detail)
        }

        var status = 0
        raxx_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var fields = HTTPFields()
        for (name, value) in headerFields {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        let response = HTTPResponse(status: .init(code: status), headerFields: fields)
        let responseBody = request.method == .head ? nil : HTTPBody(responseBody)
        return (response, responseBody)
    }
}

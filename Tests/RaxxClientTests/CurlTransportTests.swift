import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxCore
import RaxxTestSupport
import Testing

@testable import RaxxClient

/// The libcurl transport against loopback listeners that refuse, hang, reset and answer.
@Suite struct CurlTransportTests {
    let transport = CurlTransport(
        options: .init(
            connectTimeout: .seconds(2), totalTimeout: RaxxDuration(milliseconds: 700), userAgent: "raxx-test/0.1.0"))

    func get(_ url: String, path: String = "/api/health") async throws -> (HTTPResponse, String) {
        let (response, body) = try await transport.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: path), body: nil,
            baseURL: URL(string: url)!, operationID: "test")
        var text = ""
        if let body { text = try await String(collecting: body, upTo: 1 << 20) }
        return (response, text)
    }

    func failure(_ url: String) async -> TransportFailure? {
        do {
            _ = try await get(url)
            return nil
        } catch {
            return error as? TransportFailure
        }
    }

    @Test func refusedConnectionIsHardOffline() async throws {
        let listener = try LoopbackListener(.refuse)
        let f = await failure(listener.url)
        #expect(f?.kind == .offlineHard)
        #expect(f?.connectivity == .offlineHard)
        // libcurl's own words, from its error buffer: what it tried to reach.
        let port = try #require(URL(string: listener.url)?.port)
        #expect(f?.detail.contains("port \(port)") == true, "\(f?.detail ?? "no failure")")
    }

    @Test func hangingServerIsSoftOfflineWithinTheTimeout() async throws {
        let listener = try LoopbackListener(.hang)
        defer { listener.stop() }
        let started = ContinuousClock.now
        let f = await failure(listener.url)
        #expect(f?.kind == .offlineSoft)
        #expect(f?.curlCode == 28)
        // Ended by the 700 ms total timeout (curl code 28 above says which bound), not forever; the
        // time allows for a suite that keeps both cores busy (a fresh-clone CI run measured 35 s
        // here once, the end-to-end suites' tools running beside it).
        #expect(ContinuousClock.now - started < .seconds(120))
        #expect(listener.requests.count == 1)
    }

    @Test func resetConnectionIsSoftOffline() async throws {
        let listener = try LoopbackListener(.reset)
        defer { listener.stop() }
        let f = await failure(listener.url)
        #expect(f?.kind == .offlineSoft)
    }

    @Test func answersComeBackWithStatusHeadersAndBody() async throws {
        let listener = try LoopbackListener(.respond(status: 200, headers: ["Content-Type": "text/plain", "X-Raxx": "yes"], body: "hello"))
        defer { listener.stop() }
        let (response, body) = try await get(listener.url, path: "/api/health?x=1")
        #expect(response.status.code == 200)
        #expect(response.headerFields[HTTPField.Name("X-Raxx")!] == "yes")
        #expect(body == "hello")
        let request = try #require(listener.requests.first)
        #expect(request.hasPrefix("GET /api/health?x=1 HTTP/1.1\r\n"))
        #expect(request.contains("User-Agent: raxx-test/0.1.0\r\n"))
    }

    @Test func postsTheBody() async throws {
        let listener = try LoopbackListener(.respond(status: 201, body: "{}"))
        defer { listener.stop() }
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/api/orders")
        request.headerFields[.contentType] = "application/json"
        let (response, _) = try await transport.send(
            request, body: HTTPBody(#"{"qty":1}"#),
            baseURL: URL(string: listener.url)!, operationID: "placeOrder")
        #expect(response.status.code == 201)
        let raw = try #require(listener.requests.first)
        #expect(raw.hasPrefix("POST /api/orders HTTP/1.1"))
        #expect(raw.hasSuffix("\r\n\r\n{\"qty\":1}"))
        #expect(!raw.contains("Expect: 100-continue"))
    }

    @Test func keepsTheConnectionAlive() async throws {
        let listener = try LoopbackListener(.respond(status: 200, body: "ok"))
        defer { listener.stop() }
        for _ in 0..<5 { _ = try await get(listener.url) }
        #expect(listener.requests.count == 5)
        #expect(listener.connections == 1)
    }

    /// Whether the calling thread is the lane's (by its name).
    nonisolated func onLaneThread() -> Bool { Thread.current.name == "raxx-requests" }

    @Test func requestsOnTheirOwnLaneArePerformedInPlace() async throws {
        let listener = try LoopbackListener(.respond(status: 200, body: "ok"))
        defer { listener.stop() }
        #expect(!InPlaceRequests.isCurrent)
        let (onLane, bodies, elsewhere) = await InPlaceRequests.run { () async -> (Bool, [String], Bool) in
            var bodies: [String] = []
            for _ in 0..<3 { bodies.append((try? await get(listener.url))?.1 ?? "failed") }
            // A task started from the lane carries its task-locals; it performs in place only if it
            // runs on the lane's thread too, never on the pool's.
            let started = await Task { (InPlaceRequests.isCurrent, onLaneThread()) }.value
            return (InPlaceRequests.isCurrent, bodies, started.0 == started.1)
        }
        #expect(onLane)
        #expect(elsewhere)
        #expect(bodies == ["ok", "ok", "ok"])
        #expect(listener.connections == 1)
        #expect(!InPlaceRequests.isCurrent)
        // Failures are thrown as from the pool.
        let refused = try LoopbackListener(.refuse)
        let kind = await InPlaceRequests.run { await failure(refused.url)?.kind }
        #expect(kind == .offlineHard)
    }

    @Test(arguments: ["http://example.com", "http://10.1.2.3:8080", "ftp://127.0.0.1"])
    func refusesPlainHTTPBeyondLoopback(url: String) async {
        let f = await failure(url)
        #expect(f?.kind == .policy)
    }

    /// What is decided of a base URL is kept for the requests that follow to it, and decided again
    /// for the next one: a transport that goes from one server to another never carries a
    /// loopback server's allowance (plain http, no proxy) over to the other.
    @Test func eachBaseURLIsJudgedOnItsOwn() throws {
        func judged(_ base: String, _ path: String = "/api/health") throws -> (url: String, bypassesProxy: Bool) {
            try transport.requestURL(for: HTTPRequest(method: .get, scheme: nil, authority: nil, path: path), baseURL: URL(string: base)!)
        }
        for _ in 0..<2 {
            #expect(try judged("http://127.0.0.1:8080/") == ("http://127.0.0.1:8080/api/health", true))
            #expect(try judged("http://127.0.0.1:8080/", "/api/orders") == ("http://127.0.0.1:8080/api/orders", true))
            #expect(throws: TransportFailure.self) { try judged("http://example.com") }
            #expect(try judged("https://api.raxx.app") == ("https://api.raxx.app/api/health", false))
            #expect(try judged("https://LOCALHOST:8443//") == ("https://LOCALHOST:8443/api/health", true))
            #expect(throws: TransportFailure.self) { try judged("ftp://127.0.0.1") }
        }
        // A path that does not start at the root is judged with the URL it makes.
        #expect(try judged("https://api.raxx.app", "@127.0.0.1/x").bypassesProxy == CurlOptions.bypassesProxy("https://api.raxx.app@127.0.0.1/x"))
    }

    @Test(arguments: [
        (6, TransportFailure.Kind.offlineHard), (7, .offlineHard), (5, .offlineHard), (28, .offlineSoft),
        (52, .offlineSoft), (55, .offlineSoft), (56, .offlineSoft), (60, .tls), (35, .tls), (42, .cancelled),
        (1, .policy), (27, .other),
    ])
    func classifiesCurlCodes(code: Int, kind: TransportFailure.Kind) {
        #expect(TransportFailure.kind(forCurlCode: code) == kind)
    }

    @Test func userAgentNamesToolVersionAndLibcurl() {
        let ua = CurlTransport.userAgent(tool: "raxx-order")
        #expect(ua.hasPrefix("raxx-order/\(RaxxVersion.current) libcurl/"))
    }
}

@Suite struct ServerClockTests {
    @Test func readsTheDateHeader() {
        #expect(ServerClock.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        for bad in ["", "Sun, 06 Nov 1994 08:49:37 PST", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT"] {
            #expect(ServerClock.parseHTTPDate(bad) == nil, "\(bad)")
        }
    }

    @Test func measuresHowFarTheServerIsAhead() {
        let local = Date(timeIntervalSince1970: 1_795_255_200)
        let clock = ServerClock(local: { local })
        #expect(clock.now() == local)  // nothing seen yet
        clock.observe(dateHeader: "Sat, 21 Nov 2026 11:00:00 GMT", receivedAt: local)  // an hour ahead
        #expect(abs(clock.skew - 3600.5) < 0.01)
        clock.observe(dateHeader: "Sat, 21 Nov 2026 10:00:00 GMT", receivedAt: local)  // in step: within a second is no skew
        #expect(clock.skew == 0)
    }

    @Test func theSameHeaderAgainIsMeasuredAgainstItsOwnArrival() {
        // Answers within one second carry the same header: each is still measured from when it came.
        var local = Date(timeIntervalSince1970: 1_795_255_200)
        let clock = ServerClock(local: { Date(timeIntervalSince1970: 0) })
        clock.observe(dateHeader: "Sat, 21 Nov 2026 11:00:00 GMT", receivedAt: local)
        #expect(abs(clock.skew - 3600.5) < 0.01)
        local = local.addingTimeInterval(1800)
        clock.observe(dateHeader: "Sat, 21 Nov 2026 11:00:00 GMT", receivedAt: local)
        #expect(abs(clock.skew - 1800.5) < 0.01)
        clock.observe(dateHeader: "Sat, 21 Nov 2026 10:30:00 GMT", receivedAt: local)
        #expect(clock.skew == 0)
        // A header that does not parse leaves the last reading as it was.
        clock.observe(dateHeader: "Sat, 21 Nov 2026 10:30:00 PST", receivedAt: local)
        #expect(clock.skew == 0)
        clock.observe(dateHeader: "Sat, 21 Nov 2026 11:00:00 GMT", receivedAt: local)
        #expect(abs(clock.skew - 1800.5) < 0.01)
    }
}

@Suite struct ServerClockOverTheWireTests {
    @Test func anAnswersDateHeaderSetsTheSkew() async throws {
        // A server whose clock is an hour ahead says so in its Date header.
        let ahead = Date().addingTimeInterval(3600)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let body = #"{"status":"ok","version":"1","time":"2026-11-21T10:00:00Z"}"#
        let listener = try LoopbackListener(
            .respond(
                status: 200, headers: ["Content-Type": "application/json", "Date": formatter.string(from: ahead)],
                body: body))
        defer { listener.stop() }
        let configuration = try RaxxConfiguration(environment: ["HOME": "/tmp", "RAXX_API_URL": listener.url])
        let clock = ServerClock()
        _ = try await RaptorClient.make(tool: "raxx-test", configuration: configuration, serverClock: clock).getHealth()
        // An hour, less however long the answer took to come (a loaded machine may take seconds).
        #expect(clock.skew > 3500 && clock.skew < 3602, "\(clock.skew)")
    }
}

@Suite struct RequestTimeoutTests {
    @Test func aLongPollIsNotCutByTheDefaultTimeout() async throws {
        let listener = try LoopbackListener(.hang)
        defer { listener.stop() }
        let configuration = try RaxxConfiguration(environment: ["HOME": "/tmp", "RAXX_API_URL": listener.url, "RAXX_TIMEOUT": "300ms"])
        let client = RaptorClient.make(tool: "raxx-test", configuration: configuration)
        let longStart = ContinuousClock.now
        await #expect(throws: (any Error).self) {
            _ = try await RequestTimeout.$total.withValue(RaxxDuration(milliseconds: 1500)) { try await client.getHealth() }
        }
        let held = ContinuousClock.now - longStart
        // Held for the request's own bound: the 300 ms default would have cut it long before.
        #expect(held >= .milliseconds(1400), "\(held)")
    }
}

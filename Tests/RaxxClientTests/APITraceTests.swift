import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxCore
import RaxxTestSupport
import Synchronization
import Testing

@testable import RaxxClient

/// `RAXX_DEBUG=api`: the exchange as it went, with nothing secret in it.
@Suite struct APITraceTests {
    final class Lines: Sendable {
        let text = Mutex("")
        var trace: APITrace { APITrace { line in self.text.withLock { $0 += line } } }
    }

    @Test func theExchangeShowsWithItsSecretsRedacted() async throws {
        let answer = #"{"access_token":"tok-secret-1","renewal_token":"ren-secret-2","account":{"id":"acc_1"},"code":"step_up_required"}"#
        let listener = try LoopbackListener(
            .respond(
                status: 201, headers: ["Content-Type": "application/json", "Set-Cookie": "s=cookie-secret"],
                body: answer))
        defer { listener.stop() }
        let lines = Lines()
        let transport = CurlTransport(options: .init(userAgent: "raxx-test/0.1.0", trace: lines.trace))
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/api/auth/login/verify?x=1")
        request.headerFields[.authorization] = "Bearer bearer-secret-3"
        request.headerFields[HTTPField.Name("Raxx-Step-Up-Grant")!] = "grant-secret-4"
        request.headerFields[.contentType] = "application/json"
        let body =
            #"""
            {"email":"t@example.com","code":"12345678","credential":{"id":"cred1","response":{"signature":"sig-secret-5","clientDataJSON":"cd-secret-6",\#
            "authenticatorData":"ad-secret-7","userHandle":"uh-secret-8"}},"pin":"2468"}
            """#
        _ = try await transport.send(request, body: HTTPBody(body), baseURL: URL(string: listener.url)!, operationID: "test")

        let text = lines.text.withLock { $0 }
        #expect(text.contains("> POST \(listener.url)/api/auth/login/verify?x=1\n"))
        #expect(text.contains("> Authorization: Bearer [redacted]\n"))
        #expect(text.contains("> Raxx-Step-Up-Grant: [redacted]\n"))
        #expect(text.contains(#""email":"t@example.com""#) && text.contains(#""id":"cred1""#))
        #expect(text.range(of: #"< 201 Created \(\d+ ms\)\n"#, options: .regularExpression) != nil)
        #expect(text.contains("< Set-Cookie: [redacted]\n") || text.contains("< set-cookie: [redacted]\n"))
        #expect(text.contains(#""account":{"id":"acc_1"}"#))
        // A problem's code shows; a one-time code does not.
        #expect(text.contains(#""code":"step_up_required""#) && !text.contains("12345678"))
        for secret in [
            "tok-secret-1", "ren-secret-2", "bearer-secret-3", "grant-secret-4", "sig-secret-5", "cd-secret-6", "ad-secret-7",
            "uh-secret-8", "2468", "cookie-secret",
        ] {
            #expect(!text.contains(secret), "\(secret) shows in the trace")
        }
    }

    @Test func aFailureAndABodyThatIsNotJSONShowWhatTheyCan() async throws {
        let down = try LoopbackListener(.respond(status: 503, body: "<html>down</html>"))
        defer { down.stop() }
        let lines = Lines()
        let transport = CurlTransport(options: .init(userAgent: "raxx-test/0.1.0", trace: lines.trace))
        _ = try await transport.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/api/health"), body: nil,
            baseURL: URL(string: down.url)!, operationID: "test")
        #expect(lines.text.withLock { $0 }.contains("< 503 Service Unavailable ("))
        #expect(lines.text.withLock { $0 }.contains("[17 bytes, not JSON]\n"))

        let refused = try LoopbackListener(.refuse)
        let failed = Lines()
        let quick = CurlTransport(
            options: .init(
                connectTimeout: .seconds(2), totalTimeout: .seconds(5), userAgent: "raxx-test/0.1.0",
                trace: failed.trace))
        await #expect(throws: TransportFailure.self) {
            _ = try await quick.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/api/health"), body: nil,
                baseURL: URL(string: refused.url)!, operationID: "test")
        }
        #expect(failed.text.withLock { $0 }.contains("< no answer ("))
    }

    /// An export, an audit trail, a data-subject request: a person's data, which shows by its size
    /// alone, both ways (raxx-dsr encrypts an export and never writes it to a terminal).
    @Test(arguments: [Operations.ExportDSRData.id, Operations.ListSubjectAuditEvents.id, Operations.CreateDSRRequest.id])
    func personalDataShowsByItsSizeAlone(operationID: String) async throws {
        let rows = Array(repeating: #"{"id":"ord_1","symbol":"AAPL","qty":10}"#, count: 40).joined(separator: ",")
        let answer = #"{"manifest":{"request_id":"dsr_1","subject":"subject@example.com","tables":[]},"tables":{"orders":[\#(rows)]}}"#
        let listener = try LoopbackListener(.respond(status: 200, headers: ["Content-Type": "application/json"], body: answer))
        defer { listener.stop() }
        let lines = Lines()
        let transport = CurlTransport(options: .init(userAgent: "raxx-test/0.1.0", trace: lines.trace))
        let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/api/dsr/requests/dsr_1/export")
        let sent = #"{"email":"subject@example.com","kind":"access","ticket":"T-1"}"#
        _ = try await transport.send(request, body: HTTPBody(sent), baseURL: URL(string: listener.url)!, operationID: operationID)

        let text = lines.text.withLock { $0 }
        #expect(text.contains("< 200 OK ("))
        #expect(!text.contains("subject@example.com"), "\(text)")
        #expect(!text.contains("AAPL"), "\(text)")
        #expect(answer.utf8.count > 1_000)
        #expect(text.contains("\n<body: \(APITrace.grouped(answer.utf8.count)) bytes, personal data not shown>\n"), "\(text)")
        #expect(text.contains("\n<body: \(sent.utf8.count) bytes, personal data not shown>\n"), "\(text)")
    }

    /// A subject's audit trail is asked for by its email, in the query: under RAXX_DEBUG=api the
    /// email showed in the URL even with the body hidden.
    @Test func aPersonalDataQueryIsNotShown() async throws {
        let listener = try LoopbackListener(
            .respond(
                status: 200, headers: ["Content-Type": "application/json"],
                body: #"{"events":[],"cursor":0,"has_more":false}"#))
        defer { listener.stop() }
        let lines = Lines()
        let transport = CurlTransport(options: .init(userAgent: "raxx-test/0.1.0", trace: lines.trace))
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/api/dsr/audit?email=bob%40x.test&limit=10")
        _ = try await transport.send(request, body: nil, baseURL: URL(string: listener.url)!, operationID: Operations.ListSubjectAuditEvents.id)
        let text = lines.text.withLock { $0 }
        #expect(text.contains("> GET ") && text.contains("/api/dsr/audit?[personal data not shown]"), "\(text)")
        #expect(!text.contains("bob") && !text.contains("x.test"), "\(text)")
        // Another operation's query shows as it is.
        #expect(APITrace.shown("http://h/api/events?wait=30", of: Operations.ListEvents.id) == "http://h/api/events?wait=30")
    }

    /// The list of the operations whose bodies are personal data is the spec's operations, by id.
    @Test func personalDataIsKnownByOperation() {
        #expect(APITrace.personalData.contains(Operations.ExportDSRData.id))
        #expect(APITrace.personalData.contains(Operations.ListAuditEvents.id))
        #expect(!APITrace.personalData.contains(Operations.GetSyncChanges.id))
        #expect(!APITrace.personalData.contains(Operations.GetDSRReceiptKey.id))
        #expect([0, 999, 1_000, 12_345, 1_234_567].map(APITrace.grouped) == ["0", "999", "1,000", "12,345", "1,234,567"])
    }

    @Test func raxxDebugTurnsItOn() throws {
        let base = ["RAXX_HOME": "/tmp/raxx-trace-test"]
        #expect(try RaxxConfiguration(environment: base).debugAPI == false)
        #expect(try RaxxConfiguration(environment: base.merging(["RAXX_DEBUG": "api"]) { $1 }).debugAPI)
        #expect(try RaxxConfiguration(environment: base.merging(["RAXX_DEBUG": "cache,api"]) { $1 }).debugAPI)
        #expect(try RaxxConfiguration(environment: base.merging(["RAXX_DEBUG": "1"]) { $1 }).debugAPI == false)
    }
}

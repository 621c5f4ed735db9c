import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxClient
import RaxxCore
import RaxxTestSupport
import Synchronization
import Testing

/// `RAXX_DEBUG=api`: the exchange as it went, with nothing secret in it.
@Suite struct APITraceTests {
    final class Lines: Sendable {
        let text = Mutex("")
        var trace: APITrace { APITrace { line in self.text.withLock { $0 += line } } }
    }

    @Test func theExchangeShowsWithItsSecretsRedacted() async throws {
        let answer = #"{"access_token":"tok-secret-1","renewal_token":"ren-secret-2","account":{"id":"acc_1"},"code":"step_up_required"}"#
        let listener = try LoopbackListener(.respond(status: 201, headers: ["Content-Type": "application/json", "Set-Cookie": "s=cookie-secret"],
                                                     body: answer))
        defer { listener.stop() }
        let lines = Lines()
        let transport = CurlTransport(options: .init(userAgent: "raxx-test/0.1.0", trace: lines.trace))
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/api/auth/login/verify?x=1")
        request.headerFields[.authorization] = "Bearer bearer-secret-3"
        request.headerFields[HTTPField.Name("Raxx-Step-Up-Grant")!] = "grant-secret-4"
        request.headerFields[.contentType] = "application/json"
        let body = #"{"email":"t@example.com","code":"12345678","credential":{"id":"cred1","response":{"signature":"sig-secret-5","clientDataJSON":"cd-secret-6","authenticatorData":"ad-secret-7","userHandle":"uh-secret-8"}},"pin":"2468"}"#
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
        for secret in ["tok-secret-1", "ren-secret-2", "bearer-secret-3", "grant-secret-4", "sig-secret-5", "cd-secret-6", "ad-secret-7",
                       "uh-secret-8", "2468", "cookie-secret"] {
            #expect(!text.contains(secret), "\(secret) shows in the trace")
        }
    }

    @Test func aFailureAndABodyThatIsNotJSONShowWhatTheyCan() async throws {
        let down = try LoopbackListener(.respond(status: 503, body: "<html>down</html>"))
        defer { down.stop() }
        let lines = Lines()
        let transport = CurlTransport(options: .init(userAgent: "raxx-test/0.1.0", trace: lines.trace))
        _ = try await transport.send(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/api/health"), body: nil,
                                     baseURL: URL(string: down.url)!, operationID: "test")
        #expect(lines.text.withLock { $0 }.contains("< 503 Service Unavailable ("))
        #expect(lines.text.withLock { $0 }.contains("[17 bytes, not JSON]\n"))

        let refused = try LoopbackListener(.refuse)
        let failed = Lines()
        let quick = CurlTransport(options: .init(connectTimeout: .seconds(2), totalTimeout: .seconds(5), userAgent: "raxx-test/0.1.0",
                                                 trace: failed.trace))
        await #expect(throws: TransportFailure.self) {
            _ = try await quick.send(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/api/health"), body: nil,
                                     baseURL: URL(string: refused.url)!, operationID: "test")
        }
        #expect(failed.text.withLock { $0 }.contains("< no answer ("))
    }

    @Test func raxxDebugTurnsItOn() throws {
        let base = ["RAXX_HOME": "/tmp/raxx-trace-test"]
        #expect(try RaxxConfiguration(environment: base).debugAPI == false)
        #expect(try RaxxConfiguration(environment: base.merging(["RAXX_DEBUG": "api"]) { $1 }).debugAPI)
        #expect(try RaxxConfiguration(environment: base.merging(["RAXX_DEBUG": "cache,api"]) { $1 }).debugAPI)
        #expect(try RaxxConfiguration(environment: base.merging(["RAXX_DEBUG": "1"]) { $1 }).debugAPI == false)
    }
}

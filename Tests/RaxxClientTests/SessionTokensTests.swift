import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxTestSupport
import RaxxVault
import Testing

/// Silent renewal, serialised: one renewal per process, a token another process renewed is used
/// as it is, and a request refused for a token replaced meanwhile is sent again with the new one.
@Suite struct SessionTokensTests {
    let origin = Fixtures.origin
    let clock = TestClock(Fixtures.now)

    func tokens(_ keystore: MemoryKeystore, _ api: StubAPI) -> SessionTokens {
        SessionTokens(keystore: keystore, client: api.api(middlewares: []), origin: origin, clock: clock.closure)
    }

    @Test func concurrentCallersShareOneRenewal() async throws {
        let keystore = Fixtures.keystore(session: Fixtures.session(accessFor: -1))
        let api = StubAPI()
        api.onRenewSession { _ in
            try await Task.sleep(for: .milliseconds(200))
            return .ok(.init(body: .json(Fixtures.grant(access: "access-2", renewal: "renewal-2"))))
        }
        let tokens = tokens(keystore, api)
        async let a = tokens.accessToken()
        async let b = tokens.accessToken()
        #expect(try await [a, b] == ["access-2", "access-2"])
        #expect(api.operations == ["renewSession"])
    }

    @Test func aTokenAnotherProcessRenewedMeanwhileIsUsedNotRenewedAgain() async throws {
        // A 3-second access token: always inside the 30-second margin, so the old rule renewed on
        // every call and each process replaced the token the others were using.
        let keystore = Fixtures.keystore(session: Fixtures.session(accessFor: -1))
        let fresh = Fixtures.session(access: "access-2", renewal: "renewal-2", accessFor: 3)
        keystore.whileWaitingForTheLock = {
            var contents = (try? keystore.load()) ?? KeystoreContents()
            contents[Fixtures.origin].session = fresh
            try? keystore.save(contents)
            keystore.whileWaitingForTheLock = nil
        }
        let api = StubAPI()
        #expect(try await tokens(keystore, api).accessToken() == "access-2")
        #expect(api.calls.isEmpty)
    }

    @Test func aShortLivedTokenIsUsedForAThirdOfItsLife() async throws {
        var session = Fixtures.session(accessFor: 3)
        session.accessIssuedAt = Fixtures.now
        let api = StubAPI()
        #expect(try await tokens(Fixtures.keystore(session: session), api).accessToken() == "access-1")
        #expect(api.calls.isEmpty)
    }

    @Test func aRequestRefusedForAReplacedTokenIsSentAgainWithTheNewOne() async throws {
        let keystore = Fixtures.signedIn()
        let middleware = BearerTokenMiddleware(tokens: tokens(keystore, StubAPI()))
        let sent = Sent()
        let answer = try await middleware.intercept(
            HTTPRequest(method: .get, scheme: "https", authority: "api.raxx.app", path: "/api/session"),
            body: nil, baseURL: URL(fileURLWithPath: "/"), operationID: "getSession"
        ) { request, _, _ in
            let authorization = request.headerFields[.authorization] ?? ""
            sent.append(authorization)
            guard authorization == "Bearer access-1" else { return (HTTPResponse(status: .ok), nil) }
            // Another process renews the session while this request is in flight: its token is refused.
            var contents = try keystore.load()
            contents[Fixtures.origin].session = Fixtures.session(access: "access-2", renewal: "renewal-2")
            try keystore.save(contents)
            return (HTTPResponse(status: .unauthorized), nil)
        }
        #expect(answer.0.status == .ok)
        #expect(sent.values == ["Bearer access-1", "Bearer access-2"])
    }

    @Test func aRefusalWithNoNewerTokenIsTheServersAnswer() async throws {
        let middleware = BearerTokenMiddleware(tokens: tokens(Fixtures.signedIn(), StubAPI()))
        let sent = Sent()
        let answer = try await middleware.intercept(
            HTTPRequest(method: .get, scheme: "https", authority: "api.raxx.app", path: "/api/session"),
            body: nil, baseURL: URL(fileURLWithPath: "/"), operationID: "getSession"
        ) { request, _, _ in
            sent.append(request.headerFields[.authorization] ?? "")
            return (HTTPResponse(status: .unauthorized), nil)
        }
        #expect(answer.0.status == .unauthorized)
        #expect(sent.values == ["Bearer access-1"])
    }

    @Test func noSessionForThisServerIsNotSignedInThere() async throws {
        let keystore = Fixtures.keystore(session: Fixtures.session(), origin: "http://127.0.0.1:8080")
        let api = StubAPI()
        do {
            _ = try await tokens(keystore, api).accessToken()
            Issue.record("a token of another server was handed out")
        } catch let error as RaxxError {
            #expect(error.message == "Not signed in to https://api.raxx.app: raxx-auth login")
            #expect(error.status == .signInRequired)
        }
    }
}

final class Sent: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ value: String) { lock.withLock { list.append(value) } }
    var values: [String] { lock.withLock { list } }
}

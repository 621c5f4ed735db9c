import Foundation
import GRDB
import HTTPTypes
import Logging
import OpenAPIRuntime
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxSandboxTestSupport
import RaxxTestSupport
import Testing

@testable import RaxxSandbox

// The hardening issue's items, each proven against the code that had the defect.

extension HandlerRig {
    /// The audit trail as (action, details) pairs, oldest first.
    func auditTrail() async throws -> [(action: String, details: [String: String])] {
        try await database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT action, details FROM audit_events ORDER BY seq").map { row in
                let details = (try? JSONDecoder().decode([String: String].self, from: Data((row["details"] as String).utf8))) ?? [:]
                return (row["action"], details)
            }
        }
    }

    func count(_ sql: String) async throws -> Int {
        try await database.writer.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }

    func sell(_ id: String, symbol: String = "AAPL", qty: Int64, limit: String? = nil) -> Components.Schemas.OrderRequest {
        .init(
            clientOrderId: id, symbol: symbol, side: .sell, qty: qty, _type: limit == nil ? .market : .limit, limitPrice: limit, tif: .day,
            notAfter: Self.now.addingTimeInterval(60), mode: .paper)
    }
}

/// Item 2: a renewal token presented again after it rotated revokes its session.
@Suite struct RenewalReuseTests {
    @Test func aSpentRenewalTokenRevokesTheWholeSession() async throws {
        let rig = try HandlerRig()
        let (caller, grant) = try await rig.signIn()
        let renewed = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: grant.renewalToken)))).ok.body.json
        // R1 again: refused as a sign-in-required 401, and the session behind it is over.
        let reused = await problem { _ = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: grant.renewalToken)))) }
        #expect(reused?.status == 401)
        #expect(reused?.code == .sessionExpired)
        // R2, the legitimate successor, no longer works, nor does its access token.
        let successor = await problem { _ = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: renewed.renewalToken)))) }
        #expect(successor?.status == 401)
        #expect(await problem { _ = try await rig.gate.check(Operations.GetSession.id, token: renewed.accessToken) } == .unauthorized)
        // The account hears of it, and the audit trail has the revocation.
        let alerts = try await rig.database.writer.read { db in
            try String.fetchAll(db, sql: "SELECT type FROM events WHERE user_id = ?", arguments: [caller.userID])
        }
        #expect(alerts == ["security_alert"])
        // And by email, its only contact channel.
        let mail = rig.database.mailbox.messages(to: "t@example.com")
        #expect(mail.map(\.subject) == ["A Raxx session was signed out to protect your account"])
        let trail = try await rig.auditTrail()
        #expect(
            trail.contains {
                $0.action == "session.revoked" && $0.details["reason"] == "renewal_reused"
                    && $0.details["session_id"] == caller.sessionID
            })
    }

    @Test func overHTTPTheSuccessorIsRevokedToo() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        try await withSandbox(database: database) { url in
            let renew = { (token: String) in
                try await httpCall(url, .post, "/api/auth/session/renew", body: #"{"renewal_token":"\#(token)"}"#)
            }
            let (first, body) = try await renew(grant.renewalToken)
            #expect(first.status.code == 200)
            let renewed = try JSONDecoder().decode([String: AnyDecodable].self, from: Data(body.utf8))
            let r2 = try #require(renewed["renewal_token"]?.string)
            let a2 = try #require(renewed["access_token"]?.string)
            #expect(try await httpCall(url, .get, "/api/session", headers: ["Authorization": "Bearer \(a2)"]).0.status.code == 200)
            let (again, problemBody) = try await renew(grant.renewalToken)
            #expect(again.status.code == 401)
            #expect(again.headerFields[.contentType] == "application/problem+json")
            #expect(problemBody.contains(#""code":"session_expired""#))
            #expect(try await renew(r2).0.status.code == 401)
            #expect(try await httpCall(url, .get, "/api/session", headers: ["Authorization": "Bearer \(a2)"]).0.status.code == 401)
        }
    }
}

/// Item 7: the step-up threshold at the price an order can trade at; no selling what is not held.
@Suite struct TradingPriceTests {
    @Test func aSellLimitFarBelowTheMarketIsJudgedAtTheMarket() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        // 100,000 at 0.01 is 1,000 at the limit, but fills at the market (millions): a step-up.
        let dump = rig.sell("dump", qty: 100_000, limit: "0.01")
        let asked = await problem { _ = try await rig.orders.placeOrder(.init(body: .json(dump)), caller: caller) }
        #expect(asked?.code == .stepUpRequired)
        #expect(asked?.actionHash == OrderAcceptance.requestHash(dump))
        #expect(try await rig.count("SELECT COUNT(*) FROM orders") == 0)
    }

    @Test func theTradingPriceOfEachKindOfOrder() {
        #expect(OrderAcceptance.tradingPrice(side: .buy, limit: nil, market: 500) == 500)
        #expect(OrderAcceptance.tradingPrice(side: .sell, limit: nil, market: 500) == 500)
        #expect(OrderAcceptance.tradingPrice(side: .buy, limit: 100, market: 500) == 100)
        #expect(OrderAcceptance.tradingPrice(side: .sell, limit: 100, market: 500) == 500)
        #expect(OrderAcceptance.tradingPrice(side: .sell, limit: 900, market: 500) == 900)
    }

    @Test func aBuyLimitBelowTheThresholdAtItsLimitNeedsNoStepUp() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let cheap = Components.Schemas.OrderRequest(
            clientOrderId: "cheap", symbol: "MSFT", side: .buy, qty: 100, _type: .limit, limitPrice: "1.00",
            tif: .gtc, notAfter: HandlerRig.now.addingTimeInterval(60), mode: .paper)
        let placed = try await rig.orders.placeOrder(.init(body: .json(cheap)), caller: caller).created.body.json
        #expect(placed.status == .open)
    }

    @Test func aSellBeyondThePositionIsRejected() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        // Nothing held: rejected, as an order without buying power is.
        let naked = try await rig.orders.placeOrder(.init(body: .json(rig.sell("naked", qty: 5))), caller: caller).created.body.json
        #expect(naked.status == .rejected)
        #expect(naked.rejectCode == "insufficient_position")
        // 10 held: 10 sell, the 11th does not.
        _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("buy", qty: 10))), caller: caller).created.body.json
        let resting = try await rig.orders.placeOrder(.init(body: .json(rig.sell("resting", qty: 4, limit: "2000"))), caller: caller)
            .created.body.json
        #expect(resting.status == .open)
        // 4 of the 10 are committed to the resting sell: 7 more is too many, 6 is not.
        let tooMany = try await rig.orders.placeOrder(.init(body: .json(rig.sell("seven", qty: 7))), caller: caller).created.body.json
        #expect(tooMany.status == .rejected && tooMany.rejectCode == "insufficient_position")
        let six = try await rig.orders.placeOrder(.init(body: .json(rig.sell("six", qty: 6))), caller: caller).created.body.json
        #expect(six.status == .filled)
        let portfolio = try await rig.sync.getPortfolio(.init(), caller: caller).ok.body.json
        #expect(portfolio.positionsCount == 1)
        #expect(try await rig.database.writer.read { db in try Int64.fetchOne(db, sql: "SELECT qty FROM positions") } == 4)
    }
}

/// Item 8: every refusal on a money or permission path lands in the audit trail.
@Suite struct RefusalAuditTests {
    @Test func aLiveOrderRefusalIsAudited() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let live = await problem { _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("l", mode: .live))), caller: caller) }
        #expect(live?.code == .liveTradingRefused)
        let trail = try await rig.auditTrail()
        #expect(trail.last?.action == "order.refused")
        #expect(trail.last?.details == ["client_order_id": "l", "reason": "live_trading_refused"])
    }

    @Test func aStepUpAskedForIsAudited() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let asked = await problem {
            _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("big", symbol: "MSFT", qty: 100))), caller: caller)
        }
        #expect(asked?.code == .stepUpRequired)
        let trail = try await rig.auditTrail()
        #expect(trail.last?.action == "step_up.required")
        #expect(trail.last?.details["client_order_id"] == "big")
    }

    @Test func aRefusedStepUpGrantIsAudited() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let forged = await problem {
            _ = try await rig.orders.placeOrder(
                .init(headers: .init(raxxStepUpGrant: "forged"), body: .json(rig.order("big", symbol: "MSFT", qty: 100))),
                caller: caller)
        }
        #expect(forged?.code == .stepUpInvalid)
        let trail = try await rig.auditTrail()
        #expect(trail.last?.action == "step_up.refused")
        #expect(trail.last?.details["reason"] == "grant_invalid")
    }

    @Test func aRefusedRenewalIsAudited() async throws {
        let rig = try HandlerRig()
        let refused = await problem { _ = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: "never-issued")))) }
        #expect(refused == .sessionExpired)
        let trail = try await rig.auditTrail()
        #expect(trail.last?.action == "session.renewal_refused")
        #expect(trail.last?.details["reason"] == "unknown_token")
    }

    @Test func aDetectedReuseIsAudited() async throws {
        let rig = try HandlerRig()
        let (caller, grant) = try await rig.signIn()
        _ = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: grant.renewalToken))))
        _ = await problem { _ = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: grant.renewalToken)))) }
        let trail = try await rig.auditTrail()
        #expect(trail.last?.action == "session.renewal_refused")
        #expect(trail.last?.details == ["session_id": caller.sessionID, "reason": "renewal_reused"])
    }

    @Test func aStaffOnlyRefusalIsAudited() async throws {
        let rig = try HandlerRig()
        let (caller, grant) = try await rig.signIn()
        var gate = AccessGate(sessions: rig.stores.sessions, clock: rig.clock, audit: rig.stores.audit)
        gate.table = ["staffThing": .staff]
        await #expect(throws: ProblemError.staffOnly) { try await gate.check("staffThing", token: grant.accessToken) }
        let trail = try await rig.auditTrail()
        #expect(trail.last?.action == "access.refused")
        #expect(trail.last?.details == ["operation": "staffThing", "reason": "staff_only", "session_id": caller.sessionID])
    }

    @Test func theServiceAuditsThroughItsGate() throws {
        let service = RaptorService(database: try SandboxDatabase(path: ":memory:"), configuration: SandboxConfiguration())
        #expect(service.gate.audit != nil)
    }
}

/// Item 9: a 500 logs the operation, status and code; never a credential.
@Suite struct LogRedactionTests {
    @Test func aServerErrorLogsNoCredentials() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        // Break the trading tables so that placing an order fails inside the handler: a 500.
        try await database.writer.write { db in try db.execute(sql: "DROP TABLE fills; DROP TABLE orders") }
        let capture = LogCapture()
        var logger = Logger(label: "raxx-sandbox-test") { _ in CapturingLogHandler(capture: capture) }
        logger.logLevel = .trace
        let stepUpGrant = "step-up-grant-\(UUID().uuidString)"
        let clientOrderID = "order-\(UUID().uuidString)"
        try await withLoggedSandbox(database: database, logger: logger) { url in
            let order =
                #"{"client_order_id":"\#(clientOrderID)","symbol":"AAPL","side":"buy","qty":1,"type":"market","tif":"day","#
                + #""not_after":"2999-01-01T00:00:00Z","mode":"paper"}"#
            let (response, body) = try await httpCall(
                url, .post, "/api/orders",
                headers: ["Authorization": "Bearer \(grant.accessToken)", "Raxx-Step-Up-Grant": stepUpGrant],
                body: order)
            #expect(response.status.code == 500)
            #expect(response.headerFields[.contentType] == "application/problem+json")
            #expect(body.contains(#""code":"internal""#))
        }
        let lines = capture.lines
        #expect(lines.contains { $0.contains("placeOrder") && $0.contains("500") && $0.contains("internal") }, "\(lines)")
        for secret in [grant.accessToken, stepUpGrant, grant.renewalToken, clientOrderID] {
            #expect(!lines.contains { $0.contains(secret) }, "the log carries \(secret): \(lines)")
        }
    }
}

/// Item 10: bounded bodies, the spec's own limits, and pruning.
@Suite struct InputBoundsTests {
    @Test func aBodyAboveOneMiBIs413() async throws {
        try await withSandbox { url in
            let big = #"{"email":"a@b.co","pad":""# + String(repeating: "x", count: ProblemError.maxBodyBytes) + #""}"#
            let (response, body) = try await httpCall(url, .post, "/api/auth/login/options", body: big)
            #expect(response.status.code == 413)
            #expect(response.headerFields[.contentType] == "application/problem+json")
            #expect(body.contains(#""code":"payload_too_large""#))
            // Just under the bound still answers.
            let fits = try await httpCall(url, .post, "/api/auth/login/options", body: #"{"email":"a@b.co"}"#)
            #expect(fits.0.status.code == 200)
        }
    }

    @Test func theSpecsLimitsOnAnOrderAreEnforced() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        for (id, qty, field) in [
            (String(repeating: "a", count: 65), Int64(1), "client_order_id"), ("has space", 1, "client_order_id"),
            ("é", 1, "client_order_id"), ("ok-1", 1_000_001, "qty"),
        ] {
            let refused = await problem { _ = try await rig.orders.placeOrder(.init(body: .json(rig.order(id, qty: qty))), caller: caller) }
            #expect(refused?.code == .badRequest, "\(id) \(qty)")
            #expect(refused?.detail?.contains("'\(field)'") == true, "\(id) \(qty)")
        }
        let longSymbol = await problem {
            _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("s", symbol: String(repeating: "A", count: 33)))), caller: caller)
        }
        #expect(longSymbol?.detail?.contains("'symbol'") == true)
        // The bounds themselves are fine.
        let edge = rig.order(String(repeating: "a", count: 60) + ".:_-", qty: 1)
        #expect(try await rig.orders.placeOrder(.init(body: .json(edge)), caller: caller).created.body.json.status == .filled)
        #expect(try await rig.count("SELECT COUNT(*) FROM orders") == 1)
    }

    @Test func aLongDisplayNameIsRefused() async throws {
        let rig = try HandlerRig()
        let long = await problem {
            _ = try await rig.auth.registerOptions(
                .init(body: .json(.init(email: "n@example.com", displayName: String(repeating: "n", count: 65)))),
                caller: { nil })
        }
        #expect(long?.code == .badRequest)
        #expect(long?.detail?.contains("'display_name'") == true)
        _ = try await rig.auth.registerOptions(
            .init(body: .json(.init(email: "n@example.com", displayName: String(repeating: "n", count: 64)))),
            caller: { nil })
    }

    @Test func deadChallengesSessionsAndGrantsArePruned() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let now = HandlerRig.now.timeIntervalSince1970
        let dayAndMore = 24 * 3600.0 + 60
        try await rig.database.writer.write { db in
            for (challenge, expires, used) in [("expired", now - 1, nil), ("used", now + 100, now - 5), ("live", now + 100, nil)] as [(String, Double, Double?)]
            {
                try db.execute(
                    sql: "INSERT INTO challenges (challenge, purpose, expires_at, used_at) VALUES (?, 'login', ?, ?)",
                    arguments: [challenge, expires, used])
            }
            for (grant, expires, used) in [("g-expired", now - 1, nil), ("g-used", now + 100, now - 5), ("g-live", now + 100, nil)]
                as [(String, Double, Double?)]
            {
                try db.execute(
                    sql: "INSERT INTO step_up_grants (grant_hash, user_id, action_hash, expires_at, used_at) VALUES (?, ?, 'h', ?, ?)",
                    arguments: [grant, caller.userID, expires, used])
            }
            for (id, expires, revoked) in [
                ("s-ended", now - dayAndMore, nil), ("s-revoked", now + 100, now - dayAndMore),
                ("s-just-ended", now - 60, nil),
            ] as [(String, Double, Double?)] {
                try db.execute(
                    sql: """
                        INSERT INTO sessions (id, user_id, access_token_hash, access_expires_at, renewal_token_hash, created_at, expires_at, revoked_at)
                        VALUES (?, ?, ?, ?, ?, 0, ?, ?)
                        """, arguments: [id, caller.userID, "a-" + id, min(expires, now), "r-" + id, expires, revoked])
            }
        }
        _ = try await rig.auth.loginOptions(.init(body: .json(.init())))
        try await rig.stores.auth.grantStepUp(
            grantHash: "g-new", userID: caller.userID, actionHash: "h",
            expiresAt: HandlerRig.now.addingTimeInterval(60), now: HandlerRig.now)
        _ = try await rig.signIn("other@example.com")
        let challenges = try await rig.database.writer.read { try String.fetchAll($0, sql: "SELECT challenge FROM challenges ORDER BY challenge") }
        #expect(challenges.count == 2 && challenges.contains("live") && !challenges.contains("expired") && !challenges.contains("used"))
        let grants = try await rig.database.writer.read { try String.fetchAll($0, sql: "SELECT grant_hash FROM step_up_grants ORDER BY grant_hash") }
        #expect(grants == ["g-live", "g-new"])
        let sessions = try await rig.database.writer.read { try String.fetchAll($0, sql: "SELECT id FROM sessions WHERE id LIKE 's-%' ORDER BY id") }
        #expect(sessions == ["s-just-ended"])
        #expect(try await rig.count("SELECT COUNT(*) FROM sessions") == 3)
    }
}

/// Item 11: every error below the handlers is problem+json with a code, naming what is wrong.
@Suite struct DecodingProblemTests {
    @Test func aWrongTypedQueryParameterIsNamed() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        let auth = ["Authorization": "Bearer \(grant.accessToken)"]
        try await withSandbox(database: database) { url in
            for (path, name) in [
                ("/api/orders?limit=abc", "limit"), ("/api/orders?status=open&limit=abc", "limit"),
                ("/api/orders?status=nope", "status"), ("/api/sync?cursor=x&limit=5", "cursor"),
                ("/api/sync?limit=5&rebuild=maybe", "rebuild"),
            ] {
                let (response, body) = try await httpCall(url, .get, path, headers: auth)
                #expect(response.status.code == 400, "\(path)")
                #expect(response.headerFields[.contentType] == "application/problem+json", "\(path)")
                #expect(body.contains(#""code":"bad_request""#), "\(path)")
                #expect(body.contains("query parameter '\(name)'"), "\(path): \(body)")
            }
            // Good values still answer.
            #expect(try await httpCall(url, .get, "/api/orders?limit=5&status=open", headers: auth).0.status.code == 200)
        }
    }

    @Test func instrumentsWithoutASymbolIs400NamingIt() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        let auth = ["Authorization": "Bearer \(grant.accessToken)"]
        try await withSandbox(database: database) { url in
            for path in ["/api/instruments", "/api/instruments?other=1"] {
                let (response, body) = try await httpCall(url, .get, path, headers: auth)
                #expect(response.status.code == 400, "\(path)")
                #expect(response.headerFields[.contentType] == "application/problem+json", "\(path)")
                #expect(body.contains("'symbol'"), "\(path): \(body)")
            }
            #expect(try await httpCall(url, .get, "/api/instruments?symbol=AAPL&symbol=ZZZZ", headers: auth).0.status.code == 200)
        }
    }

    @Test func malformedRequestsAreProblems() async throws {
        try await withSandbox { url in
            let cases: [(HTTPRequest.Method, String, [String: String], String?)] = [
                (.post, "/api/auth/login/options", [:], "[]"),
                (.post, "/api/auth/login/options", [:], #"{"email":5}"#),
                (.post, "/api/auth/login/options", ["Content-Type": "text/plain"], "hello"),
                (.post, "/api/auth/register/options", [:], nil),
                (.post, "/api/auth/session/renew", [:], "{}"),
            ]
            for (method, path, headers, body) in cases {
                let (response, text) = try await httpCall(url, method, path, headers: headers, body: body)
                #expect((400..<500).contains(response.status.code), "\(path) \(body ?? "")")
                #expect(response.headerFields[.contentType] == "application/problem+json", "\(path) \(body ?? ""): \(text)")
                #expect(text.contains(#""code":""#), "\(path) \(body ?? "")")
            }
            let shape = try await httpCall(url, .post, "/api/auth/login/options", body: "[]")
            #expect(!shape.1.contains("field ''"))
            // An Accept the answer cannot meet was a 500 (and a log line with the whole request).
            let (unacceptable, text) = try await httpCall(url, .get, "/api/health", headers: ["Accept": "text/html"])
            #expect(unacceptable.status.code == 406)
            #expect(unacceptable.headerFields[.contentType] == "application/problem+json")
            #expect(text.contains(#""code":"not_acceptable""#))
        }
    }
}

// MARK: Helpers

/// Sends one request as it is, and answers the response and its body as text.
func httpCall(_ url: URL, _ method: HTTPRequest.Method, _ path: String, headers: [String: String] = [:], body: String? = nil)
    async throws -> (HTTPResponse, String)
{
    var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
    if body != nil { request.headerFields[.contentType] = "application/json" }
    for (k, v) in headers {
        guard let name = HTTPField.Name(k) else { continue }
        request.headerFields[name] = v
    }
    let transport = CurlTransport(options: .init(userAgent: "raxx-test"))
    let (response, responseBody) = try await transport.send(request, body: body.map { HTTPBody($0) }, baseURL: url, operationID: "raw")
    var text = ""
    if let responseBody { text = try await String(collecting: responseBody, upTo: 1 << 20) }
    return (response, text)
}

/// A JSON value read loosely, for a test that needs a string or two of a response.
struct AnyDecodable: Decodable {
    var string: String?
    init(from decoder: any Decoder) throws {
        string = try? decoder.singleValueContainer().decode(String.self)
    }
}

/// Every line logged, with its metadata, as text.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    func append(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        stored.append(line)
    }

    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(
        level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String,
        line: UInt
    ) {
        capture.append("\(level) \(message) \(self.metadata.merging(metadata ?? [:]) { $1 })")
    }
}

/// `withSandbox` with the application's logger given.
func withLoggedSandbox(database: SandboxDatabase, logger: Logger, _ body: (URL) async throws -> Void) async throws {
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let app = try buildApplication(
        configuration: SandboxConfiguration(port: 0), database: database, logger: logger,
        onListening: { continuation.yield($0) })
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), let url = URL(string: "http://127.0.0.1:\(port)") else {
            group.cancelAll()
            return
        }
        do {
            try await body(url)
        } catch {
            group.cancelAll()
            throw error
        }
        group.cancelAll()
    }
}

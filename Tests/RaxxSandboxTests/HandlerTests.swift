import Foundation
import GRDB
import RaxxAPI
import RaxxDomain
import RaxxCore
@testable import RaxxSandbox
import RaxxTestSupport
import Testing

/// The handlers called directly (no HTTP, no access gate), over the GRDB stores of an
/// in-memory database and a fixed clock.
struct HandlerRig {
    static let now = Date(timeIntervalSince1970: 1_795_000_000) // 2026-11-18
    let database: SandboxDatabase
    let stores: Stores
    let configuration = SandboxConfiguration()
    let clock: @Sendable () -> Date = { HandlerRig.now }
    let market = Market()

    init() throws {
        database = try SandboxDatabase(path: ":memory:")
        stores = database.stores
    }

    var auth: AuthHandlers {
        AuthHandlers(auth: stores.auth, sessions: stores.sessions, audit: stores.audit, configuration: configuration, clock: clock)
    }
    var session: SessionHandlers {
        SessionHandlers(sessions: stores.sessions, switches: switches, configuration: configuration, clock: clock)
    }
    var switches: DeadManSwitches { DeadManSwitches(trading: stores.trading, market: market, clock: clock) }
    var orders: OrderHandlers {
        OrderHandlers(trading: stores.trading, audit: stores.audit, market: market, configuration: configuration, clock: clock,
                      faults: FaultInjector(loseOrderReplies: 0))
    }
    var sync: SyncHandlers { SyncHandlers(trading: stores.trading, market: market, configuration: configuration, clock: clock) }
    var gate: AccessGate { AccessGate(sessions: stores.sessions, clock: clock) }
    var events: EventHandlers { EventHandlers(events: stores.events, notifier: database.notifier, clock: clock) }
    var devices: DeviceHandlers { DeviceHandlers(devices: stores.devices, clock: clock) }

    /// A signed-in caller and its grant.
    func signIn(_ email: String = "t@example.com") async throws -> (Caller, Components.Schemas.SessionGrant) {
        let grant = try await signedInGrant(database, email: email, configuration: configuration, now: Self.now)
        return (try await gate.caller(Operations.GetSession.id, token: grant.accessToken), grant)
    }

    func auditActions() async throws -> [String] {
        try await database.writer.read { try String.fetchAll($0, sql: "SELECT action FROM audit_events ORDER BY seq") }
    }

    func order(_ id: String, symbol: String = "AAPL", qty: Int64 = 10, mode: Components.Schemas.TradingMode = .paper,
               notAfter: TimeInterval = 60) -> Components.Schemas.OrderRequest {
        .init(clientOrderId: id, symbol: symbol, side: .buy, qty: qty, _type: .market, tif: .day,
              notAfter: Self.now.addingTimeInterval(notAfter), mode: mode)
    }
}

/// The problem `body` throws, if it throws one.
func problem(_ body: () async throws -> Void) async -> ProblemError? {
    do {
        try await body()
        return nil
    } catch let problem as ProblemError {
        return problem
    } catch {
        Issue.record("not a problem: \(error)")
        return nil
    }
}

@Suite struct OrderHandlerTests {
    @Test func aSmallMarketOrderFillsAndARetryAnswersTheSameOrder() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let placed = try await rig.orders.placeOrder(.init(body: .json(rig.order("a"))), caller: caller).created.body.json
        #expect(placed.status == .filled)
        #expect(placed.filledQty == 10)
        let again = try await rig.orders.placeOrder(.init(body: .json(rig.order("a"))), caller: caller).ok.body.json
        #expect(again.id == placed.id)
        #expect(await problem { _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("a", qty: 11))), caller: caller) }?.code == .conflict)
        let fetched = try await rig.orders.getOrder(.init(path: .init(orderId: placed.id)), caller: caller).ok.body.json
        #expect(fetched == placed)
        let list = try await rig.orders.listOrders(.init(), caller: caller).ok.body.json
        #expect(list.orders.map(\.id) == [placed.id])
        #expect(await problem { _ = try await rig.orders.cancelOrder(.init(path: .init(orderId: placed.id)), caller: caller) }?.code == .notCancellable)
        #expect(try await rig.auditActions().suffix(2) == ["order.placed", "order.filled"])
    }

    @Test func anotherAccountsOrderIsNotFound() async throws {
        let rig = try HandlerRig()
        let (alice, _) = try await rig.signIn("alice@example.com")
        let (bob, _) = try await rig.signIn("bob@example.com")
        let placed = try await rig.orders.placeOrder(.init(body: .json(rig.order("a"))), caller: alice).created.body.json
        #expect(await problem { _ = try await rig.orders.getOrder(.init(path: .init(orderId: placed.id)), caller: bob) }?.status == 404)
        #expect(await problem { _ = try await rig.orders.cancelOrder(.init(path: .init(orderId: placed.id)), caller: bob) }?.status == 404)
    }

    @Test func refusalsKeepTheirCodes() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let live = await problem { _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("l", mode: .live))), caller: caller) }
        #expect(live?.code == .liveTradingRefused && live?.status == 403)
        let late = await problem { _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("d", notAfter: -1))), caller: caller) }
        #expect(late?.code == .deadlinePassed && late?.status == 422)
        let unknown = await problem { _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("u", symbol: "ZZZZ"))), caller: caller) }
        #expect(unknown?.code == .unknownSymbol)
        // Above the notional threshold: a step-up bound to this very order's hash.
        let large = rig.order("big", symbol: "MSFT", qty: 100)
        let asked = await problem { _ = try await rig.orders.placeOrder(.init(body: .json(large)), caller: caller) }
        #expect(asked?.code == .stepUpRequired)
        #expect(asked?.actionHash == OrderHandlers.requestHash(large))
        let forged = await problem {
            _ = try await rig.orders.placeOrder(.init(headers: .init(raxxStepUpGrant: "forged"), body: .json(large)), caller: caller)
        }
        #expect(forged?.code == .stepUpInvalid)
    }

    @Test func aStepUpGrantPlacesItsOrderOnce() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let large = rig.order("big", symbol: "MSFT", qty: 100)
        let grant = "a-grant"
        try await rig.stores.auth.grantStepUp(grantHash: Tokens.hash(grant), userID: caller.userID,
                                                    actionHash: OrderHandlers.requestHash(large), expiresAt: HandlerRig.now.addingTimeInterval(60),
                                                    now: HandlerRig.now)
        let input = Operations.PlaceOrder.Input(headers: .init(raxxStepUpGrant: grant), body: .json(large))
        let placed = try await rig.orders.placeOrder(input, caller: caller).created.body.json
        #expect(placed.clientOrderId == "big")
        let other = rig.order("big2", symbol: "MSFT", qty: 100)
        #expect(await problem {
            _ = try await rig.orders.placeOrder(.init(headers: .init(raxxStepUpGrant: grant), body: .json(other)), caller: caller)
        }?.code == .stepUpInvalid)
    }
}

@Suite struct SyncHandlerTests {
    @Test func anOrderShowsUpInSyncSummaryAndPortfolio() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("a"))), caller: caller).created.body.json
        let page = try await rig.sync.getSyncChanges(.init(query: .init(cursor: 0)), caller: caller).ok.body.json
        #expect(Set(page.changes.map(\.entity)) == [.order, .fill, .position])
        #expect(page.changes.allSatisfy { $0.op == .upsert })
        #expect(!page.hasMore && !page.reset)
        #expect(page.cursor == page.changes.last?.seq)
        let empty = try await rig.sync.getSyncChanges(.init(query: .init(cursor: page.cursor)), caller: caller).ok.body.json
        #expect(empty.changes.isEmpty && empty.cursor == page.cursor)
        let summary = try await rig.sync.getSyncSummary(.init(), caller: caller).ok.body.json
        #expect(summary.cursor == page.cursor)
        #expect(summary.positions.count == 1 && summary.fills.count == 1 && summary.orders.count == 1)
        let portfolio = try await rig.sync.getPortfolio(.init(), caller: caller).ok.body.json
        #expect(portfolio.positionsCount == 1)
        #expect(portfolio.accountId == caller.accountID)
        #expect(await problem { _ = try await rig.sync.getSyncChanges(.init(query: .init(cursor: -1)), caller: caller) }?.code == .cursorInvalid)
    }

    @Test func seededHistoryPagesInOrder() async throws {
        let rig = try HandlerRig()
        let summary = try Seeder(database: rig.database, market: rig.market).seed(email: "t@example.com", positions: 20, fills: 100, now: HandlerRig.now)
        let (caller, _) = try await rig.signIn()
        var cursor: Int64 = 0, seen = 0, pages = 0
        while true {
            let page = try await rig.sync.getSyncChanges(.init(query: .init(cursor: cursor, limit: 50)), caller: caller).ok.body.json
            seen += page.changes.count
            pages += 1
            cursor = page.cursor
            if !page.hasMore { break }
        }
        #expect(seen == 20 + 100 + summary.orders)
        #expect(pages == (seen + 49) / 50)
    }
}

@Suite struct SessionAndAuthHandlerTests {
    @Test func renewalRotatesTokensAndLogoutRevokes() async throws {
        let rig = try HandlerRig()
        let (caller, grant) = try await rig.signIn()
        let renewed = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: grant.renewalToken)))).ok.body.json
        #expect(renewed.renewalToken != grant.renewalToken)
        #expect(renewed.sessionExpiresAt == grant.sessionExpiresAt)
        #expect(await problem { _ = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: grant.renewalToken)))) }
                == .sessionExpired)
        let current = try await rig.session.getSession(.init(), caller: caller).ok.body.json
        #expect(current.account.id == caller.accountID)
        _ = try await rig.session.logout(.init(), caller: caller)
        #expect(await problem { _ = try await rig.gate.check(Operations.GetSession.id, token: renewed.accessToken) } == .unauthorized)
        #expect(try await rig.auditActions().suffix(2) == ["session.renewal_refused", "session.revoked"])
    }

    @Test func optionsForNewAndExistingAccounts() async throws {
        let rig = try HandlerRig()
        // Without a code: one is emailed (202), and no options are given.
        let sent = try await rig.auth.registerOptions(.init(body: .json(.init(email: " New@Example.com "))), caller: { nil }).accepted.body.json
        #expect(sent.email == "new@example.com")
        #expect(sent.digits == 8)
        let code = try #require(rig.database.mailbox.messages(to: "new@example.com").last?.code)
        let options = try await rig.auth.registerOptions(.init(body: .json(.init(email: " New@Example.com ", code: code))), caller: { nil })
            .ok.body.json
        #expect(options.user.name == "new@example.com")
        #expect(Base64URL.decode(options.user.id)?.count == 32)
        #expect(options.excludeCredentials?.isEmpty ?? true)
        #expect(await problem { _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "nope"))), caller: { nil }) }?.code
                == .badRequest)
        // An account with a passkey takes another with the emailed code, and only with it: its own
        // live session is not enough (a 15-minute token must not become a permanent passkey).
        let (caller, _) = try await rig.signIn("has@example.com")
        try await rig.database.writer.write { db in
            try db.execute(sql: "INSERT INTO passkeys (id, user_id, public_key, algorithm, created_at) VALUES ('cred', ?, x'00', -7, 0)",
                           arguments: [caller.userID])
        }
        _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "has@example.com"))), caller: { caller }).accepted
        #expect(await problem {
            _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "has@example.com", code: "00000000"))), caller: { caller })
        }?.code == .codeInvalid)
        let emailed = try #require(rig.database.mailbox.messages(to: "has@example.com").last?.code)
        let own = try await rig.auth.registerOptions(.init(body: .json(.init(email: "has@example.com", code: emailed))), caller: { nil }).ok.body.json
        #expect(own.excludeCredentials?.map(\.id) == ["cred"])
        // Spent: the same code again is refused.
        #expect(await problem {
            _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "has@example.com", code: emailed))), caller: { nil })
        }?.code == .codeExpired)
        let login = try await rig.auth.loginOptions(.init(body: .json(.init(email: "has@example.com")))).ok.body.json
        #expect(login.allowCredentials?.map(\.id) == ["cred"])
        let nobody = try await rig.auth.loginOptions(.init(body: .json(.init(email: "nobody@example.com")))).ok.body.json
        #expect(nobody.allowCredentials?.isEmpty ?? true)
        // A challenge is good for one try.
        #expect(try await rig.stores.auth.consumeChallenge(login.challenge, purpose: .login, now: HandlerRig.now) != nil)
        #expect(try await rig.stores.auth.consumeChallenge(login.challenge, purpose: .login, now: HandlerRig.now) == nil)
    }

    /// A session alone (a stolen token) never removes a passkey: it takes a grant bound to that
    /// very passkey's removal.
    @Test func removingAPasskeyNeedsAStepUpBoundToIt() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn("p@example.com")
        try await rig.database.writer.write { db in
            for id in ["cred-a", "cred-b"] {
                try db.execute(sql: "INSERT INTO passkeys (id, user_id, public_key, algorithm, created_at) VALUES (?, ?, x'00', -7, 0)",
                               arguments: [id, caller.userID])
            }
        }
        let bare = await problem { _ = try await rig.auth.removePasskey(.init(path: .init(passkeyId: "cred-b")), caller: caller) }
        #expect(bare?.code == .stepUpRequired)
        #expect(bare?.actionHash == PasskeyRemovalAction(passkeyID: "cred-b").actionHash)
        // A grant bound to another passkey's removal does not do.
        let grant = Tokens.random()
        try await rig.stores.auth.grantStepUp(grantHash: Tokens.hash(grant), userID: caller.userID,
                                                     actionHash: PasskeyRemovalAction(passkeyID: "cred-a").actionHash,
                                                     expiresAt: HandlerRig.now.addingTimeInterval(60), now: HandlerRig.now)
        #expect(await problem {
            _ = try await rig.auth.removePasskey(.init(path: .init(passkeyId: "cred-b"), headers: .init(raxxStepUpGrant: grant)), caller: caller)
        }?.code == .stepUpInvalid)
        _ = try await rig.auth.removePasskey(.init(path: .init(passkeyId: "cred-a"), headers: .init(raxxStepUpGrant: grant)), caller: caller)
            .noContent
        #expect(try await rig.database.writer.read { try String.fetchAll($0, sql: "SELECT id FROM passkeys") } == ["cred-b"])
        #expect(try await rig.auditActions().contains("passkey.removed"))
    }

    /// A database in memory makes a temporary Maildir at its first email, and takes it with it.
    @Test func aDatabaseInMemoryTakesItsMailWithIt() async throws {
        var database: SandboxDatabase? = try SandboxDatabase(path: ":memory:")
        let directory = try #require(database?.mailer.directory)
        try await database?.stores.auth.sendRegistrationCode(email: "m@example.com", code: "12345678",
                                                                    expiresAt: HandlerRig.now.addingTimeInterval(600), now: HandlerRig.now)
        #expect(Mailbox(directory: directory).messages(to: "m@example.com").count == 1)
        database = nil
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    @Test func aCodeAllowsFiveTriesAndTenMinutesAndIsKeptOnlyAsAHash() async throws {
        let rig = try HandlerRig()
        func ask(_ code: String?) async -> String? {
            await problem { _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "c@example.com", code: code))), caller: { nil }) }?.code.rawValue
        }
        _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "c@example.com"))), caller: { nil }).accepted
        let code = try #require(rig.database.mailbox.messages(to: "c@example.com").last?.code)
        #expect((6...10).contains(code.count))
        let stored = try await rig.database.writer.read { try String.fetchAll($0, sql: "SELECT email_hash || code_hash FROM email_codes") }
        #expect(stored.count == 1 && !stored[0].contains(code) && !stored[0].contains("c@example.com"))
        let wrong = code == "11111111" ? "22222222" : "11111111"
        var answers: [String?] = []
        for _ in 1...5 { answers.append(await ask(wrong)) }
        #expect(answers == ["code_invalid", "code_invalid", "code_invalid", "code_invalid", "code_expired"])
        #expect(await ask(code) == "code_expired") // the fifth wrong try spent it
        // A new code, past its ten minutes.
        _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "c@example.com"))), caller: { nil }).accepted
        let late = try #require(rig.database.mailbox.messages(to: "c@example.com").last?.code)
        let later = HandlerRig.now.addingTimeInterval(AuthHandlers.codeLifetime + 1)
        let expired = AuthHandlers(auth: rig.stores.auth, sessions: rig.stores.sessions, audit: rig.stores.audit,
                                   configuration: rig.configuration, clock: { later })
        #expect(await problem { _ = try await expired.registerOptions(.init(body: .json(.init(email: "c@example.com", code: late))), caller: { nil }) }?
                .code == .codeExpired)
    }

    @Test func healthReadsTheDatabase() async throws {
        let rig = try HandlerRig()
        let health = try await MetaHandlers(health: rig.stores.health, clock: rig.clock).getHealth(.init()).ok.body.json
        #expect(health.status == .ok && health.time == HandlerRig.now)
    }
}

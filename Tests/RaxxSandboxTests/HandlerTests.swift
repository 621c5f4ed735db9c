import Crypto
import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxSandboxTestSupport
import RaxxTestSupport
import Testing

@testable import RaxxSandbox

/// The handlers called directly (no HTTP, no access gate), over the GRDB stores of an
/// in-memory database and a fixed clock.
struct HandlerRig {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18
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
        OrderHandlers(
            trading: stores.trading, audit: stores.audit, market: market, configuration: configuration, clock: clock,
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

    func order(
        _ id: String, symbol: String = "AAPL", qty: Int64 = 10, mode: Components.Schemas.TradingMode = .paper,
        notAfter: TimeInterval = 60
    ) -> Components.Schemas.OrderRequest {
        .init(
            clientOrderId: id, symbol: symbol, side: .buy, qty: qty, _type: .market, tif: .day,
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
        // Contracts the market does not list: a strike off the grid, a Thursday expiry, a strike
        // far from the price.
        for symbol in ["AAPL261218C00190001", "AAPL261217C00190000", "AAPL261218C99999000"] {
            let unlisted = await problem {
                _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("u-" + symbol.suffix(9), symbol: symbol))), caller: caller)
            }
            #expect(unlisted?.code == .unknownSymbol, "\(symbol)")
        }
        // Above the notional threshold: a step-up bound to this very order's hash.
        let large = rig.order("big", symbol: "MSFT", qty: 100)
        let asked = await problem { _ = try await rig.orders.placeOrder(.init(body: .json(large)), caller: caller) }
        #expect(asked?.code == .stepUpRequired)
        #expect(asked?.actionHash == OrderAcceptance.requestHash(large))
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
        try await rig.stores.auth.grantStepUp(
            grantHash: Tokens.hash(grant), userID: caller.userID,
            actionHash: OrderAcceptance.requestHash(large), expiresAt: HandlerRig.now.addingTimeInterval(60),
            now: HandlerRig.now)
        let input = Operations.PlaceOrder.Input(headers: .init(raxxStepUpGrant: grant), body: .json(large))
        let placed = try await rig.orders.placeOrder(input, caller: caller).created.body.json
        #expect(placed.clientOrderId == "big")
        let other = rig.order("big2", symbol: "MSFT", qty: 100)
        #expect(
            await problem {
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
        #expect(
            await problem { _ = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: grant.renewalToken)))) }
                == .sessionExpired)
        let current = try await rig.session.getSession(.init(), caller: caller).ok.body.json
        #expect(current.account.id == caller.accountID)
        _ = try await rig.session.logout(.init(), caller: caller)
        #expect(await problem { _ = try await rig.gate.check(Operations.GetSession.id, token: renewed.accessToken) } == .unauthorized)
        #expect(try await rig.auditActions().suffix(2) == ["session.renewal_refused", "session.revoked"])
    }

    @Test func sessionsListsTheCallersLiveSessionsOnly() async throws {
        let rig = try HandlerRig()
        let (first, _) = try await rig.signIn()
        let (second, _) = try await rig.signIn()
        let (third, _) = try await rig.signIn()
        let (stranger, _) = try await rig.signIn("someone@example.com")
        _ = try await rig.session.logout(.init(), caller: third)
        try await rig.database.writer.write { db in
            try db.execute(sql: "UPDATE sessions SET expires_at = ? WHERE id = ?", arguments: [HandlerRig.now.timeIntervalSince1970, first.sessionID])
        }
        let listed = try await rig.session.listSessions(.init(), caller: second).ok.body.json.sessions
        #expect(listed.map(\.id) == [second.sessionID])
        #expect(listed.map(\.current) == [true])
        #expect(listed.first?.createdAt == HandlerRig.now)
        let theirs = try await rig.session.listSessions(.init(), caller: stranger).ok.body.json.sessions
        #expect(theirs.map(\.id) == [stranger.sessionID])
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
        #expect(
            await problem { _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "nope"))), caller: { nil }) }?.code
                == .badRequest)
        // An account with a passkey takes another with the emailed code, and only with it: its own
        // live session is not enough (a 15-minute token must not become a permanent passkey).
        let (caller, _) = try await rig.signIn("has@example.com")
        try await rig.database.writer.write { db in
            try db.execute(
                sql: "INSERT INTO passkeys (id, user_id, public_key, algorithm, created_at) VALUES ('cred', ?, x'00', -7, 0)",
                arguments: [caller.userID])
        }
        _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "has@example.com"))), caller: { caller }).accepted
        #expect(
            await problem {
                _ = try await rig.auth.registerOptions(.init(body: .json(.init(email: "has@example.com", code: "00000000"))), caller: { caller })
            }?.code == .codeInvalid)
        let emailed = try #require(rig.database.mailbox.messages(to: "has@example.com").last?.code)
        let own = try await rig.auth.registerOptions(.init(body: .json(.init(email: "has@example.com", code: emailed))), caller: { nil }).ok.body.json
        #expect(own.excludeCredentials?.map(\.id) == ["cred"])
        // Spent: the same code again is refused.
        #expect(
            await problem {
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
                try db.execute(
                    sql: "INSERT INTO passkeys (id, user_id, public_key, algorithm, created_at) VALUES (?, ?, x'00', -7, 0)",
                    arguments: [id, caller.userID])
            }
        }
        let bare = await problem { _ = try await rig.auth.removePasskey(.init(path: .init(passkeyId: "cred-b")), caller: caller) }
        #expect(bare?.code == .stepUpRequired)
        #expect(bare?.actionHash == PasskeyRemovalAction(passkeyID: "cred-b").actionHash)
        // A grant bound to another passkey's removal does not do.
        let grant = Tokens.random()
        try await rig.stores.auth.grantStepUp(
            grantHash: Tokens.hash(grant), userID: caller.userID,
            actionHash: PasskeyRemovalAction(passkeyID: "cred-a").actionHash,
            expiresAt: HandlerRig.now.addingTimeInterval(60), now: HandlerRig.now)
        #expect(
            await problem {
                _ = try await rig.auth.removePasskey(.init(path: .init(passkeyId: "cred-b"), headers: .init(raxxStepUpGrant: grant)), caller: caller)
            }?.code == .stepUpInvalid)
        _ = try await rig.auth.removePasskey(.init(path: .init(passkeyId: "cred-a"), headers: .init(raxxStepUpGrant: grant)), caller: caller)
            .noContent
        #expect(try await rig.database.writer.read { try String.fetchAll($0, sql: "SELECT id FROM passkeys") } == ["cred-b"])
        #expect(try await rig.auditActions().contains("passkey.removed"))
    }

    /// An address stored before the one rule (seeded in capitals) is still mailed, as the rule
    /// writes it; one the rule refuses never reaches a header.
    @Test func theMailerWritesOnlyMailableAddresses() throws {
        let mailer = Mailer.temporary()
        defer { try? FileManager.default.removeItem(atPath: mailer.directory) }
        try mailer.deliver(Mail(to: "Bob@X.Test", subject: "A passkey was removed", body: "b"), at: HandlerRig.now)
        let mail = Mailbox(directory: mailer.directory).messages()
        #expect(mail.map(\.to) == ["bob@x.test"])
        #expect(mail.first?.raw.contains("To: <bob@x.test>\r\n") == true)
        #expect(throws: Mailer.MailError.self) {
            try mailer.deliver(Mail(to: "evil@attacker.test>,<victim@x.test", subject: "s", body: "b"), at: HandlerRig.now)
        }
        #expect(Mailbox(directory: mailer.directory).messages().count == 1)
    }

    /// A database in memory makes a temporary Maildir at its first email, and takes it with it.
    @Test func aDatabaseInMemoryTakesItsMailWithIt() async throws {
        var database: SandboxDatabase? = try SandboxDatabase(path: ":memory:")
        let directory = try #require(database?.mailer.directory)
        _ = try await database?.stores.auth.askRegistrationCode(
            email: "m@example.com", code: "12345678",
            expiresAt: HandlerRig.now.addingTimeInterval(600), now: HandlerRig.now,
            limits: RegistrationCodeLimits())
        #expect(Mailbox(directory: directory).messages(to: "m@example.com").count == 1)
        database = nil
        #expect(!FileManager.default.fileExists(atPath: directory))
    }

    /// Handlers over `rig`'s stores on a clock the test moves, sharing one client budget.
    struct CodeRig {
        let rig: HandlerRig
        let clock = TestClock(HandlerRig.now)
        let handlers: AuthHandlers
        init(limits: RegistrationCodeLimits = RegistrationCodeLimits()) throws {
            rig = try HandlerRig()
            var configuration = rig.configuration
            configuration.codeLimits = limits
            handlers = AuthHandlers(
                auth: rig.stores.auth, sessions: rig.stores.sessions, audit: rig.stores.audit,
                configuration: configuration, clock: clock.closure)
        }
        /// Asks for a code (nil) or presents one; answers the problem's code, nil when accepted.
        func ask(_ email: String, _ code: String? = nil) async -> ProblemError? {
            await problem { _ = try await handlers.registerOptions(.init(body: .json(.init(email: email, code: code))), caller: { nil }) }
        }
        func mails(_ email: String) -> [Mailbox.Message] { rig.database.mailbox.messages(to: email) }
        func wrong(_ code: String?) -> String { code == "11111111" ? "22222222" : "11111111" }
    }

    @Test func aCodeIsKeptOnlyAsAKeyedHashAndLivesTenMinutes() async throws {
        let r = try CodeRig()
        #expect(await r.ask("c@example.com") == nil)
        let code = try #require(r.mails("c@example.com").last?.code)
        #expect(code.count == AuthHandlers.codeDigits)
        let stored = try await r.rig.database.writer.read { try String.fetchAll($0, sql: "SELECT email_hash || code_hash FROM email_codes") }
        #expect(stored.count == 1 && !stored[0].contains(code) && !stored[0].contains("c@example.com"))
        // Not the bare SHA-256 a copy of the database could be searched with: the key is in memory only.
        let bare = ASCIIHex.lowercase(SHA256.hash(data: Data((AuthStore.emailHash("c@example.com") + ":" + code).utf8)))
        #expect(!stored[0].hasSuffix(bare))
        r.clock.advance(by: AuthHandlers.codeLifetime + 1)
        #expect(await r.ask("c@example.com", code)?.code == .codeExpired)
    }

    /// The attack: ask for a fresh code before every five guesses, for as long as it takes. The
    /// guesses are counted per address, so the asks buy none; once they are spent even the right
    /// code is refused until the window moves.
    @Test func wrongCodesAreCountedPerAddressHoweverManyCodesAreAskedFor() async throws {
        let r = try CodeRig()
        var answers: [Components.Schemas.ProblemCode?] = []
        for _ in 0..<4 {
            #expect(await r.ask("v@example.com") == nil)
            let code = try #require(r.mails("v@example.com").last?.code)
            for _ in 0..<5 { answers.append(await r.ask("v@example.com", r.wrong(code))?.code) }
            r.clock.advance(by: 30)
        }
        #expect(answers.prefix(9).allSatisfy { $0 == .codeInvalid })
        #expect(answers.dropFirst(9).allSatisfy { $0 == .rateLimited })
        let code = try #require(r.mails("v@example.com").last?.code)
        let limited = try #require(await r.ask("v@example.com", code))
        #expect(limited.code == .rateLimited && limited.status == 429)
        let wait = try #require(limited.retryAfter)
        #expect(wait > 0 && wait <= Int(RegistrationCodeLimits.guessWindow))
        // Once the window has moved past the first guesses, codes are read again: the one mailed
        // first has expired meanwhile (asks mailed it again, never extended it), a new one works.
        r.clock.advance(by: TimeInterval(wait))
        #expect(await r.ask("v@example.com", code)?.code == .codeExpired)
        #expect(await r.ask("v@example.com") == nil)
        let fresh = try #require(r.mails("v@example.com").last?.code)
        #expect(await r.ask("v@example.com", fresh) == nil)
    }

    /// Someone else asking for the address does not spoil the code its owner is typing: every ask
    /// mails the same live code, and the owner's code works.
    @Test func anAskNeverReplacesALiveCode() async throws {
        let r = try CodeRig()
        #expect(await r.ask("o@example.com") == nil)
        let owners = try #require(r.mails("o@example.com").last?.code)
        for _ in 0..<3 { #expect(await r.ask("o@example.com") == nil) }
        #expect(r.mails("o@example.com").map(\.code) == Array(repeating: owners, count: 4))
        #expect(await r.ask("o@example.com", owners) == nil)
        // Spent: the next ask mails a new one, and the spent one is refused.
        #expect(await r.ask("o@example.com") == nil)
        let next = try #require(r.mails("o@example.com").last?.code)
        if next != owners { #expect(await r.ask("o@example.com", owners)?.code == .codeInvalid) }
    }

    /// The budget per address alone let one client guess at many addresses at once.
    @Test func oneClientGuessingAtManyAddressesIsLimitedToo() async throws {
        let r = try CodeRig(limits: RegistrationCodeLimits(guessesPerClient: 5))
        for i in 0..<6 { #expect(await r.ask("g\(i)@example.com") == nil) }
        var answers: [Components.Schemas.ProblemCode?] = []
        for i in 0..<6 { answers.append(await r.ask("g\(i)@example.com", r.wrong(r.mails("g\(i)@example.com").last?.code))?.code) }
        #expect(answers == [.codeInvalid, .codeInvalid, .codeInvalid, .codeInvalid, .codeInvalid, .rateLimited], "\(answers)")
        // Refusals past a budget are not audited one by one.
        let refusals = try await r.rig.database.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM audit_events WHERE action = 'registration.code_refused'")
        }
        #expect(refusals == 5)
        r.clock.advance(by: RegistrationCodeLimits.clientWindow)
        let code = try #require(r.mails("g5@example.com").last?.code)
        #expect(await r.ask("g5@example.com", code) == nil)
        // An IPv6 client is one by its /64, wherever in it it asks from.
        #expect(ClientBudget.key("2001:db8:1:2::1") == ClientBudget.key("2001:0db8:0001:0002:ffff:ffff:ffff:fffe"))
        #expect(ClientBudget.key("2001:db8:1:2::1") != ClientBudget.key("2001:db8:1:3::1"))
        #expect(ClientBudget.key("127.0.0.1") == "127.0.0.1")
    }

    /// A live code about to expire is not mailed again: a new one, which has its ten minutes.
    @Test func aCodeAboutToExpireIsNotMailedAgain() async throws {
        let r = try CodeRig()
        #expect(await r.ask("e@example.com") == nil)
        let first = try #require(r.mails("e@example.com").last?.code)
        r.clock.advance(by: AuthHandlers.codeLifetime - RegistrationCodeLimits.resendLeast + 1)
        #expect(await r.ask("e@example.com") == nil)
        let second = try #require(r.mails("e@example.com").last)
        #expect(second.body.contains("for 10 minutes"), "\(second.body)")
        if second.code != first { #expect(await r.ask("e@example.com", first)?.code == .codeInvalid) }
        #expect(await r.ask("e@example.com", second.code) == nil)
    }

    @Test func mailsAreLimitedPerAddressAndAsksPerClient() async throws {
        let r = try CodeRig(limits: RegistrationCodeLimits(mailsPerAddress: 5, asksPerClient: 30))
        for _ in 0..<5 {
            #expect(await r.ask("m@example.com") == nil)
            r.clock.advance(by: 10)
        }
        let limited = try #require(await r.ask("m@example.com"))
        #expect(limited.code == .rateLimited && (limited.retryAfter ?? 0) > 0)
        #expect(limited.detail?.contains("Use the code already sent") == true)
        #expect(r.mails("m@example.com").count == 5)
        // An hour after the first mail, one more may go.
        r.clock.advance(by: RegistrationCodeLimits.mailWindow)
        #expect(await r.ask("m@example.com") == nil)
        #expect(r.mails("m@example.com").count == 6)

        // One client asking for many addresses: 30 asks a minute, then 429 with the wait.
        let c = try CodeRig(limits: RegistrationCodeLimits(asksPerClient: 30))
        for i in 0..<30 { #expect(await c.ask("a\(i)@example.com") == nil) }
        let refused = try #require(await c.ask("a30@example.com"))
        #expect(refused.code == .rateLimited && (1...60).contains(refused.retryAfter ?? 0))
        #expect(c.mails("a30@example.com").isEmpty)
        c.clock.advance(by: RegistrationCodeLimits.clientWindow)
        #expect(await c.ask("a30@example.com") == nil)
    }

    @Test func healthReadsTheDatabase() async throws {
        let rig = try HandlerRig()
        let health = try await MetaHandlers(health: rig.stores.health, clock: rig.clock).getHealth(.init()).ok.body.json
        #expect(health.status == .ok && health.time == HandlerRig.now)
    }
}

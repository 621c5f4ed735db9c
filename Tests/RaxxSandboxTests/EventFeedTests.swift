import Foundation
import GRDB
import Logging
import OpenAPIRuntime
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxSandboxTestSupport
import RaxxTestSupport
import ServiceLifecycle
import Testing

@testable import RaxxSandbox

extension HandlerRig {
    /// One page of the caller's feed.
    func feed(
        _ caller: Caller, cursor: Int64? = nil, limit: Int? = nil, wait: Int? = nil, types: [Components.Schemas.EventType]? = nil,
        since: Date? = nil
    ) async throws -> Components.Schemas.EventPage {
        try await events.listEvents(.init(query: .init(cursor: cursor, limit: limit, wait: wait, _type: types, since: since)), caller: caller)
            .ok.body.json
    }

    /// Writes an event for `caller` through the ledger, as the paper engine does.
    func writeEvent(_ caller: Caller, type: Components.Schemas.EventType = .securityAlert, at: Date = HandlerRig.now) async throws {
        try await stores.trading.write { ledger in
            try ledger.event(NewEvent(user: caller.userID, type: type, order: nil, title: "t", body: nil, at: at))
        }
    }

    /// A sell of something the caller does not hold: rejected `insufficient_position`.
    func unheldSell(_ id: String) -> Components.Schemas.OrderRequest {
        .init(
            clientOrderId: id, symbol: "MSFT", side: .sell, qty: 5, _type: .market, tif: .day,
            notAfter: Self.now.addingTimeInterval(60), mode: .paper)
    }
}

@Suite struct EventFeedTests {
    @Test func pagesFollowTheCursorOldestFirst() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let (other, _) = try await rig.signIn("other@example.com")
        for i in 0..<5 { _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("o\(i)"))), caller: caller) }
        _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("x"))), caller: other)

        let first = try await rig.feed(caller, limit: 2)
        #expect(first.events.count == 2 && first.hasMore)
        #expect(first.cursor == first.events.last?.seq)
        let second = try await rig.feed(caller, cursor: first.cursor, limit: 2)
        #expect(second.events.count == 2 && second.hasMore)
        let third = try await rig.feed(caller, cursor: second.cursor, limit: 2)
        #expect(third.events.count == 1 && !third.hasMore)
        let all = first.events + second.events + third.events
        #expect(all.map(\.seq) == all.map(\.seq).sorted())
        #expect(Set(all.map(\.seq)).count == 5)
        #expect(all.allSatisfy { $0._type == .fillConfirmed })
        // Nothing after the last: the cursor stays where it was asked.
        let empty = try await rig.feed(caller, cursor: third.cursor)
        #expect(empty.events.isEmpty && !empty.hasMore && empty.cursor == third.cursor)
        // The whole feed at once, by default; the other account's fill is not in it.
        let whole = try await rig.feed(caller)
        #expect(whole.events.map(\.seq) == all.map(\.seq) && !whole.hasMore)
        #expect(try await rig.feed(other).events.count == 1)
        // A negative cursor and a wait beyond 60 s are refused.
        #expect(await problem { _ = try await rig.feed(caller, cursor: -1) }?.code == .cursorInvalid)
        let tooLong = await problem { _ = try await rig.feed(caller, wait: 61) }
        #expect(tooLong?.status == 400 && tooLong?.detail?.contains("'wait'") == true)
    }

    @Test func typeAndSinceFilter() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let t0 = HandlerRig.now
        try await rig.writeEvent(caller, type: .securityAlert, at: t0.addingTimeInterval(-120))
        try await rig.writeEvent(caller, type: .fillConfirmed, at: t0.addingTimeInterval(-60))
        try await rig.writeEvent(caller, type: .orderRejected, at: t0)
        try await rig.writeEvent(caller, type: .securityAlert, at: t0.addingTimeInterval(60))

        let alerts = try await rig.feed(caller, types: [.securityAlert])
        #expect(alerts.events.map(\._type) == [.securityAlert, .securityAlert])
        let two = try await rig.feed(caller, types: [.orderRejected, .fillConfirmed, .orderRejected])
        #expect(two.events.map(\._type) == [.fillConfirmed, .orderRejected])
        let recent = try await rig.feed(caller, since: t0)  // at or after
        #expect(recent.events.map(\._type) == [.orderRejected, .securityAlert])
        let both = try await rig.feed(caller, types: [.securityAlert], since: t0.addingTimeInterval(-60))
        #expect(both.events.count == 1 && both.events.first?.createdAt == t0.addingTimeInterval(60))
        // has_more counts only what matches: one alert per page.
        let page = try await rig.feed(caller, limit: 1, types: [.securityAlert])
        #expect(page.events.count == 1 && page.hasMore)
        let next = try await rig.feed(caller, cursor: page.cursor, limit: 1, types: [.securityAlert])
        #expect(next.events.count == 1 && !next.hasMore)
        #expect(try await rig.feed(caller, since: t0.addingTimeInterval(3600)).events.isEmpty)
    }

    @Test func fillsAndRejectionsCarryWhatTheyAreAbout() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let filled = try await rig.orders.placeOrder(.init(body: .json(rig.order("f"))), caller: caller).created.body.json
        let rejected = try await rig.orders.placeOrder(.init(body: .json(rig.unheldSell("r"))), caller: caller).created.body.json
        #expect(rejected.status == .rejected)
        let events = try await rig.feed(caller).events
        #expect(events.count == 2)
        let fill = try #require(events.first)
        #expect(fill._type == .fillConfirmed)
        #expect(fill.orderId == filled.id && fill.symbol == "AAPL" && fill.side == .buy && fill.qty == 10)
        #expect(fill.price == filled.avgFillPrice)
        #expect(fill.title == "Filled: buy 10 AAPL at \(filled.avgFillPrice ?? "?")")
        #expect(fill.createdAt == HandlerRig.now)
        let rejection = try #require(events.last)
        #expect(rejection._type == .orderRejected)
        #expect(rejection.orderId == rejected.id && rejection.symbol == "MSFT" && rejection.reason == "insufficient_position")
        #expect(rejection.price == nil && rejection.expiresAt == nil)
    }

    @Test func aRefusedOrderWritesNoEvent() async throws {
        // The event is in the order's transaction: a refusal rolls both back.
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        _ = await problem { _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("l", mode: .live))), caller: caller) }
        #expect(try await rig.feed(caller).events.isEmpty)
    }

    @Test func theSessionExpiryScanWritesOncePerSession() async throws {
        let rig = try HandlerRig()
        let (caller, grant) = try await rig.signIn()
        let (other, _) = try await rig.signIn("other@example.com")
        try await rig.stores.sessions.revoke(sessionID: other.sessionID, userID: other.userID, now: HandlerRig.now)
        let end = grant.sessionExpiresAt
        let clock = TestClock(HandlerRig.now)
        let scan = EventHandlers(events: rig.stores.events, notifier: rig.database.notifier, clock: clock.closure)
        #expect(try await scan.noteExpiringSessions().isEmpty)  // hours away
        clock.advance(by: end.timeIntervalSince(HandlerRig.now) - 16 * 60)
        #expect(try await scan.noteExpiringSessions().isEmpty)  // 16 minutes away
        clock.advance(by: 2 * 60)
        let noted = try await scan.noteExpiringSessions()
        #expect(noted.map(\.sessionID) == [caller.sessionID])  // not the revoked one
        clock.advance(by: 60)
        #expect(try await scan.noteExpiringSessions().isEmpty)  // once per session
        let events = try await rig.feed(caller).events
        #expect(events.count == 1)
        #expect(events.first?._type == .sessionExpiring)
        #expect(events.first?.expiresAt == end)
        #expect(events.first?.createdAt == HandlerRig.now.addingTimeInterval(end.timeIntervalSince(HandlerRig.now) - 14 * 60))
        #expect(try await rig.feed(other).events.isEmpty)
        // Past its end, a session gets none.
        clock.advance(by: 20 * 60)
        let (late, _) = try await rig.signIn("late@example.com")
        #expect(try await scan.noteExpiringSessions().isEmpty)
        #expect(try await rig.feed(late).events.isEmpty)
    }

    @Test func securityAlertsSayWhatHappened() async throws {
        let rig = try HandlerRig()
        let (caller, grant) = try await rig.signIn()
        _ = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: grant.renewalToken))))
        _ = await problem { _ = try await rig.session.renewSession(.init(body: .json(.init(renewalToken: grant.renewalToken)))) }
        let alert = try #require(try await rig.feed(caller).events.first)
        #expect(alert._type == .securityAlert && alert.reason == "renewal_token_reused")
        #expect(alert.orderId == nil && alert.symbol == nil)
    }

    @Test func aSecondPasskeyAlertsTheAccount() async throws {
        let rig = try HandlerRig()
        let mint = SessionMint(configuration: rig.configuration)
        func register(_ credentialID: String) async throws -> String {
            let passkey = NewPasskey(
                credentialID: credentialID, email: "p@example.com", displayName: nil,
                userHandle: Array(repeating: 7, count: 32), publicKey: [0], signCount: 0, transports: nil)
            return try await rig.stores.auth.register(
                passkey, session: mint.mint(now: HandlerRig.now, method: "registration").session,
                now: HandlerRig.now, admit: { _ in }
            ).userID
        }
        let user = try await register("first")
        let caller = Caller(userID: user, accountID: "", sessionID: "")
        #expect(try await rig.feed(caller).events.isEmpty)  // the first passkey is no news
        #expect(try await register("second") == user)
        let alert = try #require(try await rig.feed(caller).events.first)
        #expect(alert._type == .securityAlert && alert.reason == "passkey_added")
    }

    @Test func aLongPollAnswersAsSoonAsAnEventCommits() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        async let page = rig.feed(caller, wait: 60)
        try await waitUntil { rig.database.notifier.waiting == 1 }
        _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("a"))), caller: caller)
        let placed = ContinuousClock.now
        let answered = try await page
        // A wait that ran out answers empty: the fill in the answer is what ended it, well before the
        // 60 s asked for. (Times are generous: the whole suite loads a 2-core machine.)
        #expect(ContinuousClock.now - placed < .seconds(40))
        #expect(answered.events.map(\._type) == [.fillConfirmed])
        #expect(answered.cursor == answered.events.last?.seq)
        #expect(rig.database.notifier.waiting == 0)
    }

    @Test func aLongPollAnswersEmptyAfterItsWait() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let (other, _) = try await rig.signIn("other@example.com")
        let started = ContinuousClock.now
        async let page = rig.feed(caller, cursor: 7, wait: 1, types: [.securityAlert])
        // Neither another account's event nor one of a type not asked for ends the wait (they may
        // come before it starts or during it).
        try await rig.writeEvent(other)
        try await rig.writeEvent(caller, type: .fillConfirmed)
        let answered = try await page
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(950) && elapsed < .seconds(30))
        #expect(answered.events.isEmpty && answered.cursor == 7 && !answered.hasMore)
    }

    @Test func aWaitEndsWhenItsTaskIsCancelled() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let task = Task { try await rig.feed(caller, wait: 60) }
        try await waitUntil { rig.database.notifier.waiting == 1 }
        let cancelled = ContinuousClock.now
        task.cancel()
        let page = try await task.value
        #expect(page.events.isEmpty)
        #expect(ContinuousClock.now - cancelled < .seconds(40))  // not the 60 s asked for
    }
}

/// The feed over HTTP, through the generated client.
@Suite struct EventFeedHTTPTests {
    @Test func aPendingLongPollAnswersWhenAnOrderFills() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        try await withSandbox(database: database) { url in
            let client = try generatedClient(url, middlewares: [BearerToken(grant.accessToken)])
            // A 60 s poll, which the transport holds for as long: only the fill may end it early.
            async let polled = RequestTimeout.$total.withValue(RaxxDuration.seconds(90)) {
                try await client.listEvents(query: .init(cursor: 0, wait: 60))
            }
            try await waitUntil { database.notifier.waiting == 1 }
            let order = Components.Schemas.OrderRequest(
                clientOrderId: "lp", symbol: "AAPL", side: .buy, qty: 10, _type: .market, tif: .day,
                notAfter: Date().addingTimeInterval(60), mode: .paper)
            let placed = try await client.placeOrder(body: .json(order)).created.body.json
            let placedAt = ContinuousClock.now
            let page = try await polled.ok.body.json
            // A wait that runs out answers the empty page it read first, without reading again: the
            // fill in the answer is what ended the wait, well before the 60 s asked for (generous:
            // the whole suite on two cores can hold a resumed task for seconds).
            #expect(ContinuousClock.now - placedAt < .seconds(40))
            let fill = try #require(page.events.first)
            #expect(fill._type == .fillConfirmed && fill.orderId == placed.id && fill.symbol == "AAPL" && fill.qty == 10)
            #expect(page.cursor == fill.seq && !page.hasMore)
        }
    }

    @Test func aLongPollAnswersEmptyAfterItsWaitOverHTTP() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        try await withSandbox(database: database) { url in
            let client = try generatedClient(url, middlewares: [BearerToken(grant.accessToken)])
            let started = ContinuousClock.now
            let page = try await client.listEvents(query: .init(cursor: 3, wait: 1, _type: [.securityAlert, .sessionExpiring])).ok.body.json
            #expect(ContinuousClock.now - started >= .milliseconds(950))
            #expect(page.events.isEmpty && page.cursor == 3 && !page.hasMore)
            // Out of range: 400 naming the parameter.
            let (status, body) = try await httpCall(url, .get, "/api/events?wait=61", headers: ["Authorization": "Bearer \(grant.accessToken)"])
            #expect(status.status.code == 400 && body.contains("'wait'"))
            let (badType, typeBody) = try await httpCall(
                url, .get, "/api/events?type=nope",
                headers: ["Authorization": "Bearer \(grant.accessToken)"])
            #expect(badType.status.code == 400 && typeBody.contains("'type'"))
        }
    }

    @Test func theBackgroundScanWritesSessionExpiringAndWakesALongPoll() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let clock = TestClock(Date())
        let grant = try await signedInGrant(database, email: "t@example.com", now: clock.now)
        // Another session, six minutes younger: the marker that later passes ran.
        _ = try await signedInGrant(database, email: "u@example.com", now: clock.now.addingTimeInterval(6 * 60))
        var configuration = SandboxConfiguration(port: 0)
        configuration.sessionScanInterval = .init(milliseconds: 50)
        try await withSandbox(configuration: configuration, database: database, clock: clock.closure) { url in
            let client = try generatedClient(url, middlewares: [BearerToken(grant.accessToken)])
            // A 60 s poll, held by the transport as long: only the scan's event may end it early.
            async let polled = RequestTimeout.$total.withValue(RaxxDuration.seconds(90)) {
                try await client.listEvents(query: .init(wait: 60, _type: [.sessionExpiring]))
            }
            try await waitUntil { database.notifier.waiting == 1 }
            // Ten minutes before the session's end.
            clock.advance(by: grant.sessionExpiresAt.timeIntervalSince(clock.now) - 10 * 60)
            let advanced = ContinuousClock.now
            let page = try await polled.ok.body.json
            #expect(ContinuousClock.now - advanced < .seconds(40))  // the scan's event ended the wait, not its 60 s
            #expect(page.events.map(\._type) == [.sessionExpiring])
            // (The wire's date-times are whole seconds.)
            let expiresAt = try #require(page.events.first?.expiresAt)
            #expect(abs(expiresAt.timeIntervalSince(grant.sessionExpiresAt)) < 1)
            // Later passes write no second one: once the younger session is within 15 minutes of
            // its end, a pass writes its alert, and by then the passes since the first have run.
            clock.advance(by: 2 * 60)
            @Sendable func alerts() async throws -> [String] {
                try await database.writer.read { db in
                    try String.fetchAll(db, sql: "SELECT session_id FROM events WHERE type = 'session_expiring' ORDER BY seq")
                }
            }
            try await waitUntil { try await alerts().count >= 2 }
            let written = try await alerts()
            #expect(written.count == 2 && Set(written).count == 2, "\(written)")
        }
    }

    @Test func aGracefulShutdownEndsALongPollAtOnce() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        var logger = Logger(label: "raxx-sandbox-test")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = try buildApplication(
            configuration: SandboxConfiguration(port: 0), database: database, logger: logger,
            onListening: { continuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
            let client = try generatedClient(url, middlewares: [BearerToken(grant.accessToken)])
            // The transport may hold as long as the poll asks: only the shutdown may end it early.
            async let polled = RequestTimeout.$total.withValue(RaxxDuration.seconds(90)) {
                try await client.listEvents(query: .init(cursor: 0, wait: 60))
            }
            try await waitUntil { database.notifier.waiting == 1 }
            let triggered = ContinuousClock.now
            await group.triggerGracefulShutdown()
            let page = try await polled.ok.body.json
            #expect(page.events.isEmpty && page.cursor == 0)
            // Not the 60 s asked for (generous: a loaded 2-core machine can delay a woken task by seconds).
            #expect(ContinuousClock.now - triggered < .seconds(40))
            try await tasks.waitForAll()  // the server stopped, not held by the poll
            #expect(ContinuousClock.now - triggered < .seconds(50))
        }
    }
}

@Suite struct EventCommitTests {
    static func event(_ user: String) -> NewEvent {
        NewEvent(user: user, type: .securityAlert, order: nil, title: "t", body: nil, at: HandlerRig.now)
    }

    /// A cached statement that deletes rows outlives a transaction that writes an event: with an
    /// observer added per event (`afterNextTransaction`), GRDB dropped such statements at every
    /// event, and every order prepared its DELETEs again.
    @Test func aDeletingStatementStaysCachedAcrossAnEvent() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let database = rig.database, u1 = caller.userID
        let sql = "DELETE FROM change_log WHERE entity = ? AND entity_id = ?"
        let same = try await database.writer.write { db -> Bool in
            let before = try db.cachedStatement(sql: sql)
            try EventLog.insert(db, Self.event(u1), notifier: database.notifier)
            return try db.cachedStatement(sql: sql) === before
        }
        #expect(same)
        let sameNextTime = try await database.writer.write { db -> Bool in
            let before = try db.cachedStatement(sql: sql)
            try EventLog.insert(db, Self.event(u1), notifier: database.notifier)
            return try db.cachedStatement(sql: sql) === before
        }
        #expect(sameNextTime)
    }

    /// Its users are signalled when the transaction commits (once each, however many events), and
    /// not when it rolls back; the next transaction starts with none.
    @Test func usersAreSignalledOnCommitOnly() async throws {
        let rig = try HandlerRig()
        let ((first, _), (second, _), (third, _)) = (
            try await rig.signIn(), try await rig.signIn("two@example.com"),
            try await rig.signIn("three@example.com")
        )
        let database = rig.database, notifier = database.notifier
        let (u1, u2, u3) = (first.userID, second.userID, third.userID)
        let (m1, m2, m3) = (notifier.mark(u1), notifier.mark(u2), notifier.mark(u3))
        try await database.writer.write { db in
            try EventLog.insert(db, Self.event(u1), notifier: notifier)
            try EventLog.insert(db, Self.event(u1), notifier: notifier)
            try EventLog.insert(db, Self.event(u2), notifier: notifier)
            #expect(notifier.mark(u1) == m1)
        }
        #expect(notifier.mark(u1) == m1 + 1)
        #expect(notifier.mark(u2) == m2 + 1)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await database.writer.write { db in
                try EventLog.insert(db, Self.event(u3), notifier: notifier)
                throw Refused()
            }
        }
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE sync_meta SET horizon = horizon")
        }
        #expect(notifier.mark(u3) == m3)
        #expect(notifier.mark(u1) == m1 + 1)
    }
}

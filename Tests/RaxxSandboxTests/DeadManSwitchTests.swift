import Foundation
import GRDB
import HTTPTypes
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxSandboxTestSupport
import RaxxTestSupport
import Testing

@testable import RaxxSandbox

/// The sandbox's service with a clock the test moves: the switch's deadlines pass without sleeping.
struct SwitchRig {
    let clock = TestClock(HandlerRig.now)
    let database: SandboxDatabase
    let service: RaptorService

    init() throws {
        database = try SandboxDatabase(path: ":memory:")
        service = RaptorService(database: database, configuration: SandboxConfiguration(), clock: clock.closure)
    }

    /// A new session of `email`'s account (a second call is a second session of the same account).
    func signIn(_ email: String = "t@example.com") async throws -> Caller {
        let grant = try await signedInGrant(database, email: email, now: clock.now)
        return try await service.gate.caller(Operations.GetSession.id, token: grant.accessToken)
    }

    func set(_ caller: Caller, _ timeout: Int, orders: [String]? = nil) async throws -> Components.Schemas.CancelAfter {
        try await service.orders.cancelOrdersAfter(.init(body: .json(.init(timeoutS: timeout, orderIds: orders))), caller: caller).ok.body.json
    }

    /// A GTC buy limited far below the market: it rests open.
    func rest(_ caller: Caller, _ id: String, symbol: String = "MSFT") async throws -> Components.Schemas.Order {
        try await service.orders.placeOrder(
            .init(
                body: .json(
                    .init(
                        clientOrderId: id, symbol: symbol, side: .buy, qty: 2, _type: .limit, limitPrice: "1.00", tif: .gtc,
                        notAfter: clock.now.addingTimeInterval(60), mode: .paper))), caller: caller
        ).created.body.json
    }

    func order(_ caller: Caller, _ id: String) async throws -> Components.Schemas.Order {
        try await service.orders.getOrder(.init(path: .init(orderId: id)), caller: caller).ok.body.json
    }

    func alerts(_ caller: Caller) async throws -> [Components.Schemas.Event] {
        try await service.events.listEvents(.init(query: .init(_type: [.orderCancelled])), caller: caller).ok.body.json.events
    }

    func audit(_ action: String) async throws -> [String] {
        try await database.writer.read {
            try String.fetchAll($0, sql: "SELECT details FROM audit_events WHERE action = ? ORDER BY seq", arguments: [action])
        }
    }

    /// The account's changes after `cursor`, as delta sync serves them.
    func changedOrders(_ caller: Caller, after cursor: Int64) async throws -> [String] {
        try await service.stores.trading.read { ledger in
            try ledger.changes(account: caller.accountID, after: cursor, limit: 1000).changes.filter { $0.entity == .order }.map(\.id)
        }
    }

    func syncCursor(_ caller: Caller) async throws -> Int64 {
        try await database.writer.read {
            try Int64.fetchOne($0, sql: "SELECT COALESCE(MAX(seq), 0) FROM change_log WHERE account_id = ?", arguments: [caller.accountID]) ?? 0
        }
    }
}

extension RaptorService {
    var stores: Stores { database.stores }
}

@Suite struct DeadManSwitchTests {
    @Test func theTimeoutIsFiveToSixHundredSecondsOrZero() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        for bad in [-1, 1, 4, 601, 3600] {
            let refused = await problem { _ = try await rig.set(caller, bad) }
            #expect(refused?.status == 400 && refused?.code == .badRequest, "\(bad)")
            #expect(refused?.detail?.contains("timeout_s") == true)
        }
        let low = try await rig.set(caller, 5)
        #expect(low.armed && low.timeoutS == 5 && low.firesAt == rig.clock.now.addingTimeInterval(5) && low.orders == 0)
        let high = try await rig.set(caller, 600)
        #expect(high.armed && high.firesAt == rig.clock.now.addingTimeInterval(600))
        let off = try await rig.set(caller, 0)
        #expect(!off.armed && off.timeoutS == 0 && off.firesAt == nil)
        // Disarming what is not armed answers the same.
        #expect(try await rig.set(caller, 0) == off)
        #expect(try await rig.audit("cancel_after.armed").count == 1)
        #expect(try await rig.audit("cancel_after.disarmed").count == 1)
    }

    @Test func firingCancelsOnlyTheOpenOrdersThatSessionPlacedWhileArmed() async throws {
        let rig = try SwitchRig()
        let session = try await rig.signIn()
        let sameAccountOtherSession = try await rig.signIn()
        let otherAccount = try await rig.signIn("other@example.com")
        let before = try await rig.rest(session, "before-arming")
        let armed = try await rig.set(session, 30)
        #expect(armed.orders == 0)
        let covered = try await rig.rest(session, "while-armed")
        let alsoCovered = try await rig.rest(session, "while-armed-2", symbol: "SPY")
        let otherSession = try await rig.rest(sameAccountOtherSession, "other-session")
        _ = try await rig.set(otherAccount, 30)
        let otherAccounts = try await rig.rest(otherAccount, "other-account")
        #expect(try await rig.set(session, 30).orders == 2)  // a renewal says what it covers
        let cursor = try await rig.syncCursor(session)

        rig.clock.advance(by: 29)
        #expect(try await rig.service.switches.fireDue() == 0)
        #expect(try await rig.order(session, covered.id).status == .open)
        _ = try await rig.set(otherAccount, 30)  // the other account's switch is renewed in time
        rig.clock.advance(by: 2)
        #expect(try await rig.service.switches.fireDue() == 2)

        for id in [covered.id, alsoCovered.id] {
            let order = try await rig.order(session, id)
            #expect(order.status == .cancelled && order.rejectCode == "connection_lost")
        }
        #expect(try await rig.order(session, before.id).status == .open)
        #expect(try await rig.order(sameAccountOtherSession, otherSession.id).status == .open)
        #expect(try await rig.order(otherAccount, otherAccounts.id).status == .open)
        // Delta sync sees the cancels (raxx-cache picks them up).
        #expect(Set(try await rig.changedOrders(session, after: cursor)) == [covered.id, alsoCovered.id])
        // One alert per order, with what it was about.
        let alerts = try await rig.alerts(session)
        #expect(alerts.map(\.orderId) == [covered.id, alsoCovered.id])
        #expect(alerts.allSatisfy { $0.title == "Cancelled: switch not renewed in time" && $0.reason == "connection_lost" && $0.side == .buy && $0.qty == 2 })
        #expect(alerts.map(\.symbol) == ["MSFT", "SPY"])
        #expect(try await rig.alerts(otherAccount).isEmpty)
        // The firing is audited once, naming the session and the orders; each cancel too.
        let fired = try await rig.audit("cancel_after.fired")
        #expect(fired.count == 1)
        #expect(fired.first?.contains(session.sessionID) == true && fired.first?.contains(covered.id) == true)
        #expect(try await rig.audit("order.cancelled").count == 2)
        // The switch is over: a later order of the session is not under anything.
        let later = try await rig.rest(session, "after-firing")
        _ = try await rig.set(otherAccount, 0)
        rig.clock.advance(by: 3600)
        #expect(try await rig.service.switches.fireDue() == 0)
        #expect(try await rig.order(session, later.id).status == .open)
    }

    @Test func renewalsKeepTheOrdersAndALateOneDoesNotSaveThem() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        _ = try await rig.set(caller, 5)
        let order = try await rig.rest(caller, "renewed")
        for _ in 0..<5 {
            rig.clock.advance(by: 4)
            #expect(try await rig.service.switches.fireDue() == 0)
            _ = try await rig.set(caller, 5)
        }
        #expect(try await rig.order(caller, order.id).status == .open)
        // Past the deadline, before the scan: the renewal fires the switch first, then arms anew.
        rig.clock.advance(by: 6)
        let late = try await rig.set(caller, 5)
        #expect(late.armed && late.orders == 0)
        #expect(try await rig.order(caller, order.id).rejectCode == "connection_lost")
        // Reads fire a due switch too: no answer shows an order the switch should have cancelled.
        let next = try await rig.rest(caller, "read-fires")
        rig.clock.advance(by: 6)
        #expect(try await rig.order(caller, next.id).status == .cancelled)
    }

    @Test func disarmingLeavesTheOrdersAlone() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        _ = try await rig.set(caller, 5)
        let order = try await rig.rest(caller, "kept")
        _ = try await rig.set(caller, 0)
        rig.clock.advance(by: 60)
        // Armed again later, the order placed under the earlier arming is not under it.
        _ = try await rig.set(caller, 5)
        rig.clock.advance(by: 6)
        #expect(try await rig.service.switches.fireDue() == 0)
        #expect(try await rig.order(caller, order.id).status == .open)
        #expect(try await rig.alerts(caller).isEmpty)
    }

    @Test func ordersPlacedEarlierCanBePutUnderIt() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        let other = try await rig.signIn("other@example.com")
        let earlier = try await rig.rest(caller, "earlier")
        let foreign = try await rig.rest(other, "foreign")
        let refused = await problem { _ = try await rig.set(caller, 10, orders: [earlier.id, foreign.id]) }
        #expect(refused?.status == 404)
        #expect(try await rig.set(caller, 10, orders: [earlier.id]).orders == 1)
        rig.clock.advance(by: 11)
        #expect(try await rig.service.switches.fireDue() == 1)
        #expect(try await rig.order(caller, earlier.id).status == .cancelled)
        #expect(try await rig.order(other, foreign.id).status == .open)
    }

    /// One session of an account cannot silently take an order off another live session's switch.
    @Test func anOrderUnderAnotherSessionsSwitchStaysThere() async throws {
        let rig = try SwitchRig()
        let phone = try await rig.signIn()
        let laptop = try await rig.signIn()  // a second session of the same account
        let order = try await rig.rest(phone, "guarded")
        #expect(try await rig.set(phone, 30, orders: [order.id]).orders == 1)
        let refused = await problem { _ = try await rig.set(laptop, 60, orders: [order.id]) }
        #expect(refused?.status == 409)
        #expect(refused?.detail?.contains(order.id) == true)
        // Nothing changed: the laptop armed nothing, and the phone's deadline still covers the order.
        #expect(try await rig.set(laptop, 0).orders == 0)
        rig.clock.advance(by: 31)
        #expect(try await rig.service.switches.fireDue() == 1)
        #expect(try await rig.order(phone, order.id).status == .cancelled)
        // Once the phone's switch is gone, the laptop may take an order.
        let next = try await rig.rest(phone, "next")
        #expect(try await rig.set(laptop, 60, orders: [next.id]).orders == 1)
    }

    @Test func signingOutFiresItAtOnce() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        _ = try await rig.set(caller, 600)
        let order = try await rig.rest(caller, "signed-out")
        _ = try await rig.service.session.logout(.init(), caller: caller)
        let after = try await rig.service.stores.trading.read { try $0.order(id: order.id) }
        #expect(after?.status == .cancelled && after?.rejectCode == "signed_out")
        let alerts = try await rig.service.stores.events.events(EventQuery(user: caller.userID, after: 0, limit: 10, types: ["order_cancelled"]))
        #expect(alerts.events.map(\.title) == ["Cancelled: signed out"])
        #expect(try await rig.audit("cancel_after.fired").first?.contains("signed_out") == true)
    }

    @Test func theSessionEndingFiresIt() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        _ = try await rig.set(caller, 600)
        let order = try await rig.rest(caller, "revoked")
        // Revoked otherwise than by signing out (a spent renewal token, say): the scan fires it.
        try await rig.service.stores.sessions.revoke(sessionID: caller.sessionID, userID: caller.userID, now: rig.clock.now)
        #expect(try await rig.service.switches.fireDue() == 1)
        let after = try await rig.service.stores.trading.read { try $0.order(id: order.id) }
        #expect(after?.rejectCode == "session_ended")
    }

    @Test func aFilledOrderStaysFilled() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        _ = try await rig.set(caller, 5)
        let filled = try await rig.service.orders.placeOrder(
            .init(
                body: .json(
                    .init(
                        clientOrderId: "fills", symbol: "AAPL", side: .buy, qty: 1, _type: .market, tif: .day,
                        notAfter: rig.clock.now.addingTimeInterval(60), mode: .paper))), caller: caller
        ).created.body.json
        #expect(filled.status == .filled)
        rig.clock.advance(by: 6)
        #expect(try await rig.service.switches.fireDue() == 0)
        let after = try await rig.order(caller, filled.id)
        #expect(after.status == .filled && after.rejectCode == nil)
        #expect(try await rig.alerts(caller).isEmpty)
        // The firing is audited all the same, with nothing cancelled.
        #expect(try await rig.audit("cancel_after.fired").first?.contains(#""orders":"0""#) == true)
    }

    @Test func overHTTPTheBoundsAreAProblemNamingTheField() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        try await withSandbox(database: database) { url in
            let client = try generatedClient(url, middlewares: [BearerToken(grant.accessToken)])
            let refused = try await client.cancelOrdersAfter(body: .json(.init(timeoutS: 3)))
            guard case .default(let status, let answer) = refused else {
                Issue.record("not refused: \(refused)")
                return
            }
            #expect(status == 400)
            #expect(try answer.body.applicationProblemJson.code == "bad_request")
            let armed = try await client.cancelOrdersAfter(body: .json(.init(timeoutS: 5))).ok.body.json
            #expect(armed.armed && armed.timeoutS == 5 && armed.firesAt != nil)
        }
    }
}

@Suite struct DeadManSwitchMigrationTests {
    @Test func theEventsTableKeepsItsRowsAndSequenceAndTakesOrderCancelled() throws {
        let queue = try DatabaseQueue()
        try SandboxDatabase.migrator.migrate(queue, upTo: "v7: alerts carry what they are about; one session_expiring a session")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO users (id, email, handle, created_at) VALUES ('u1', 'a@example.com', x'01', 0)")
            try db.execute(sql: "INSERT INTO events (user_id, type, title, created_at, symbol) VALUES ('u1', 'fill_confirmed', 'one', 1, 'AAPL')")
            try db.execute(sql: "INSERT INTO events (user_id, type, title, created_at) VALUES ('u1', 'security_alert', 'two', 2)")
            try db.execute(sql: "DELETE FROM events WHERE title = 'two'")  // the sequence is past it all the same
            #expect(throws: (any Error).self) {
                try db.execute(sql: "INSERT INTO events (user_id, type, title, created_at) VALUES ('u1', 'order_cancelled', 'x', 3)")
            }
        }
        try SandboxDatabase.migrator.migrate(queue, upTo: "v14: the tokens of erased accounts' sessions, to tell their devices")
        try queue.write { db in
            #expect(
                try Row.fetchAll(db, sql: "SELECT seq, title, symbol FROM events").map { "\($0[0] as Int64) \($0[1] as String) \($0[2] as String)" }
                    == ["1 one AAPL"])
            try db.execute(sql: "INSERT INTO events (user_id, type, title, created_at) VALUES ('u1', 'order_cancelled', 'three', 3)")
            #expect(try Int64.fetchOne(db, sql: "SELECT seq FROM events WHERE title = 'three'") == 3)
            #expect(throws: (any Error).self) {
                try db.execute(sql: "INSERT INTO events (user_id, type, title, created_at) VALUES ('u1', 'no_such_type', 'x', 4)")
            }
        }
        // v15: the types are the spec's enum's, not a CHECK's: a new one needs no rebuild.
        try SandboxDatabase.migrator.migrate(queue)
        try queue.write { db in
            #expect(try String.fetchAll(db, sql: "SELECT title FROM events ORDER BY seq") == ["one", "three"])
            try db.execute(sql: "INSERT INTO events (user_id, type, title, created_at) VALUES ('u1', 'price_alert', 'four', 4)")
            #expect(try Int64.fetchOne(db, sql: "SELECT seq FROM events WHERE title = 'four'") == 4)
            #expect(
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE tbl_name = 'events' AND type = 'index' ORDER BY name")
                    == ["events_session_expiring", "events_user_seq"])
            // Still one session_expiring alert a session.
            try db.execute(sql: "INSERT INTO events (user_id, type, title, created_at, session_id) VALUES ('u1', 'session_expiring', 'a', 5, 's1')")
            #expect(throws: (any Error).self) {
                try db.execute(sql: "INSERT INTO events (user_id, type, title, created_at, session_id) VALUES ('u1', 'session_expiring', 'b', 6, 's1')")
            }
        }
    }
}

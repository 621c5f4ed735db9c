import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxOrderCommand
import RaxxStore
import RaxxTestSupport
import RaxxWire
import Testing

/// What the stub server was asked and answers next, shared by a test and its plans.
final class SwitchServer: @unchecked Sendable {
    private let lock = NSLock()
    private var _timeouts: [Int] = []
    private var _orderIDs: [[String]] = []
    private var _reads = 0
    let clock: TestClock

    init(_ clock: TestClock) { self.clock = clock }

    var timeouts: [Int] { lock.withLock { _timeouts } }
    var coveredIDs: [[String]] { lock.withLock { _orderIDs } }

    /// The answer to an arm, renewal or disarm.
    func answer(_ input: Operations.CancelOrdersAfter.Input) throws -> Operations.CancelOrdersAfter.Output {
        guard case .json(let body) = input.body else { throw RaxxError(code: .internal, message: "no body") }
        lock.withLock {
            _timeouts.append(body.timeoutS)
            _orderIDs.append(body.orderIds ?? [])
        }
        let armed = body.timeoutS > 0
        return .ok(
            .init(
                body: .json(
                    .init(
                        armed: armed, timeoutS: body.timeoutS,
                        firesAt: armed ? clock.now.addingTimeInterval(Double(body.timeoutS)) : nil, orders: armed ? 1 : 0))))
    }

    /// Counts a read of the orders and answers its number (from 1); each read takes `seconds`.
    func read(taking seconds: TimeInterval) -> Int {
        clock.advance(by: seconds)
        return lock.withLock {
            _reads += 1; return _reads
        }
    }
}

/// `raxx-order watch`, `heartbeat`, `disarm` and the once-only report of the switch's cancels, in-process.
@Suite struct WatchTests {
    static let offline = TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused")

    func world() -> (TestWorld, MemoryStores, SwitchServer) {
        let world = TestWorld()
        let clock = TestClock(Fixtures.now)
        world.clock = clock
        world.keystore = Fixtures.signedIn()
        let stores = MemoryStores()
        world.stores = stores
        let server = SwitchServer(clock)
        world.api.onCancelOrdersAfter { try server.answer($0) }
        return (world, stores, server)
    }

    func order(_ id: String, _ status: OrderStatus, filled: Int64 = 0, reject: String? = nil, at: Date = Fixtures.now) -> Components.Schemas.Order {
        var o = Fixtures.order(id: id, symbol: "MSFT", qty: 2, type: .limit, limitPrice: "1.00", status: status, filled: filled, at: at)
        o.rejectCode = reject
        return o
    }

    @Test func followsUntilFinalPrintingEachChangeRenewingAndThenDisarming() async throws {
        let (world, stores, server) = world()
        world.api.onGetOrder { [self] input in
            // Four seconds a read: with a 30 s switch, a renewal is due every third read or so.
            let n = server.read(taking: 4)
            let status: OrderStatus = n < 4 ? .open : n < 8 ? .partiallyFilled : .filled
            return .ok(.init(body: .json(order(input.path.orderId, status, filled: status == .open ? 0 : status == .filled ? 2 : 1))))
        }
        #expect(try await world.run(RaxxOrder.Watch.self, ["ord-1"]) == .ok)
        #expect(world.jsonLines.map { $0["status"] as? String } == ["open", "partially_filled", "filled"])
        let timeouts = server.timeouts
        #expect(timeouts.first == 30 && timeouts.last == 0)
        #expect(timeouts.dropFirst().dropLast().allSatisfy { $0 == 30 } && timeouts.count >= 4, "\(timeouts)")
        #expect(server.coveredIDs.first == ["ord-1"])  // placed earlier: put under the switch by name
        #expect(world.stderr.contents.isEmpty)
        // Disarmed from here: nothing is left to watch for.
        #expect(try stores.journal().switchWatch()?.firesAt == nil)
    }

    @Test func aLostConnectionIsToldAtOnceAndAFiredSwitchExits69() async throws {
        let (world, _, server) = world()
        world.environment["RAXX_CANCEL_AFTER"] = "5s"
        world.api.onGetOrder { [self] input in
            let n = server.read(taking: 1)
            if n == 1 { return .ok(.init(body: .json(order(input.path.orderId, .open)))) }
            if n < 6 { throw Self.offline }
            return .ok(.init(body: .json(order(input.path.orderId, .cancelled, reject: "connection_lost", at: Fixtures.now.addingTimeInterval(5)))))
        }
        let cancelled = Components.Schemas.Event(
            seq: 41, _type: .orderCancelled, createdAt: Fixtures.now.addingTimeInterval(5),
            title: "Cancelled", orderId: "ord-1", symbol: "MSFT", side: .buy, qty: 2, reason: "connection_lost")
        world.api.onListEvents { input in
            let fresh = (input.query.cursor ?? 0) < 41
            return .ok(.init(body: .json(.init(events: fresh ? [cancelled] : [], cursor: fresh ? 41 : input.query.cursor ?? 0, hasMore: false))))
        }
        #expect(try await world.run(RaxxOrder.Watch.self, ["ord-1", "--format", "text"]) == .unavailable)
        let said = world.stderr.contents
        // Local time as every sentence says it, with how long until or ago (the test's clock moves on).
        let deadline = Fixtures.now.addingTimeInterval(5)
        let firesAt = String(PeopleText.moment(deadline, now: deadline, timeZone: .gmt).prefix { $0 != " " }) + " ("
        #expect(
            said.components(separatedBy: "No connection — the server will cancel the watched orders at \(firesAt)in ")
                .count == 2, "\(said)")
        #expect(said.contains("raxx-order: Connection back.\n"))
        #expect(said.contains("raxx-order: order ord-1 (buy 2 MSFT) was cancelled by the server at \(firesAt)"))
        #expect(said.contains(" ago): the dead man's switch fired because it was not renewed in time"))
        #expect(
            said.contains(
                "raxx-order: 1 order was cancelled by the server's dead man's switch, which fired because it was not renewed "
                    + "in time (the connection was gone).\nhint: "))
        // No renewal after the firing, and none while away (the switch was armed once, for 5 s).
        #expect(server.timeouts == [5])
        // It kept trying, backing off.
        #expect(world.sleeps.count >= 5)
        // What the watch told is not told again by the next command.
        world.api.onListOrders { _ in .ok(.init(body: .json(.init(orders: [])))) }
        #expect(try await world.run(RaxxOrder.List.self) == .ok)
        #expect(!world.stderr.contents.contains("while this device was away"), "\(world.stderr.contents)")
    }

    @Test func aConnectionBackInTimeRenewsAndGoesOn() async throws {
        let (world, _, server) = world()
        world.api.onGetOrder { [self] input in
            let n = server.read(taking: 1)
            if n == 2 || n == 3 { throw Self.offline }
            return .ok(.init(body: .json(order(input.path.orderId, n < 6 ? .open : .filled, filled: n < 6 ? 0 : 2))))
        }
        #expect(try await world.run(RaxxOrder.Watch.self, ["ord-1"]) == .ok)
        #expect(world.stderr.contents.contains("Connection back."))
        #expect(world.stderr.contents.contains("raxx-order: order ord-1 (buy 2 MSFT) is still open.\n"))
        #expect(world.jsonLines.map { $0["status"] as? String } == ["open", "filled"])
        // Armed, renewed at once on recovery (after the orders were read again), disarmed at the end.
        #expect(server.timeouts == [30, 30, 0])
        let operations = world.api.operations
        let recovery = try #require(operations.indices.dropFirst().first { operations[$0] == "cancelOrdersAfter" })
        #expect(operations[recovery - 1] == "getOrder")
    }

    @Test func withoutIdsItWatchesEveryOpenOrder() async throws {
        let (world, _, server) = world()
        world.api.onListOrders { [self] input in
            .ok(.init(body: .json(.init(orders: input.query.status == .open ? [order("ord-a", .open), order("ord-b", .open)] : []))))
        }
        world.api.onGetOrder { [self] input in
            _ = server.read(taking: 1)
            return .ok(.init(body: .json(order(input.path.orderId, .cancelled))))
        }
        #expect(try await world.run(RaxxOrder.Watch.self) == .ok)
        #expect(server.coveredIDs.first == ["ord-a", "ord-b"])
        #expect(world.jsonLines.compactMap { $0["id"] as? String } == ["ord-a", "ord-b"])
    }

    /// Ctrl-C is a decision, not a lost connection: the switch is disarmed and the orders stay open.
    @Test func anInterruptDisarmsTheSwitchAndTheOrdersStayOpen() async throws {
        let (world, stores, server) = world()
        world.api.onGetOrder { [self] input in
            if server.read(taking: 1) == 3 { world.interrupt() }
            return .ok(.init(body: .json(order(input.path.orderId, .open))))
        }
        #expect(try await world.run(RaxxOrder.Watch.self, ["ord-1"]) == .ok)
        #expect(world.stderr.contents.contains("Stopped watching. The dead man's switch is disarmed: the open orders stay open"))
        #expect(server.timeouts.first == 30 && server.timeouts.last == 0)
        #expect(try stores.journal().switchWatch()?.firesAt == nil)
    }

    /// On a terminal the live table shows the armed switch and when it would fire.
    @Test func theLiveTableShowsTheArmedSwitch() async throws {
        let (world, _, server) = world()
        world.stdoutIsTTY = true
        world.environment["TZ"] = "UTC"
        world.api.onGetOrder { [self] input in
            let n = server.read(taking: 1)
            return .ok(.init(body: .json(order(input.path.orderId, n < 3 ? .open : .filled, filled: n < 3 ? 0 : 2))))
        }
        #expect(try await world.run(RaxxOrder.Watch.self, ["ord-1"]) == .ok)
        let shown = world.stdout.contents
        #expect(shown.contains("Dead man's switch: armed; the server cancels the open orders at "), "\(shown)")
        #expect(shown.contains("ord-1"))
    }

    /// `--keep-armed` leaves it armed, for scripts that renew it themselves.
    @Test func anInterruptWithKeepArmedLeavesTheSwitchArmedAndSaysUntilWhen() async throws {
        let (world, _, server) = world()
        world.api.onGetOrder { [self] input in
            if server.read(taking: 1) == 3 { world.interrupt() }
            return .ok(.init(body: .json(order(input.path.orderId, .open))))
        }
        #expect(try await world.run(RaxxOrder.Watch.self, ["ord-1", "--keep-armed"]) == .ok)
        #expect(world.stderr.contents.contains("Stopped watching. The dead man's switch stays armed (--keep-armed)"))
        #expect(!server.timeouts.contains(0))
    }

    @Test func theTimeoutMustBeWithinTheServersBounds() throws {
        #expect(throws: (any Error).self) { try RaxxOrder.Watch.parse(["--cancel-after", "4s"]) }
        #expect(throws: (any Error).self) { try RaxxOrder.Watch.parse(["--cancel-after", "11m"]) }
        #expect(throws: (any Error).self) { try RaxxOrder.Heartbeat.parse(["--cancel-after", "0"]) }
        _ = try RaxxOrder.Watch.parse(["--cancel-after", "5s"])
        #expect(throws: RaxxError.self) { try RaxxConfiguration(environment: ["RAXX_HOME": "/x", "RAXX_CANCEL_AFTER": "2s"]) }
        #expect(try RaxxConfiguration(environment: ["RAXX_HOME": "/x", "RAXX_CANCEL_AFTER": "45s"]).cancelAfter == .seconds(45))
    }

    @Test func heartbeatRenewsOnceWithTheTimeoutLastArmed() async throws {
        let (world, stores, server) = world()
        try stores.journal().noteSwitch(accountID: Fixtures.accountID, timeout: 45, firesAt: Fixtures.now.addingTimeInterval(45), at: Fixtures.now)
        world.api.onListEvents { _ in .ok(.init(body: .json(.init(events: [], cursor: 0, hasMore: false)))) }
        #expect(try await world.run(RaxxOrder.Heartbeat.self) == .ok)
        #expect(server.timeouts == [45])
        let line = try #require(world.jsonLines.first)
        #expect(line["armed"] as? Bool == true && line["timeout_s"] as? Int == 45 && line["orders"] as? Int == 1)
        #expect(line["fires_at"] as? String == RFC3339.string(from: Fixtures.now.addingTimeInterval(45)))
        world.environment["RAXX_CANCEL_AFTER"] = "20s"
        #expect(try await world.run(RaxxOrder.Heartbeat.self) == .ok)
        #expect(try await world.run(RaxxOrder.Heartbeat.self, ["--cancel-after", "2m"]) == .ok)
        #expect(server.timeouts == [45, 20, 120])
    }

    @Test func heartbeatWithNothingArmedBeforeUsesSixtySecondsAndOfflineExits69() async throws {
        let (world, _, server) = world()
        #expect(try await world.run(RaxxOrder.Heartbeat.self) == .ok)
        #expect(server.timeouts == [60])
        let (offline, _, _) = self.world()
        offline.api.onCancelOrdersAfter { _ in throw Self.offline }
        #expect(try await offline.run(RaxxOrder.Heartbeat.self, ["--format", "text"]) == .unavailable)
        #expect(offline.stderr.contents.hasPrefix("raxx-order: This action requires an internet connection. Try again when online."))
        #expect(offline.stdout.contents.isEmpty)
    }

    @Test func disarmSendsZeroAndPrintsTheSwitch() async throws {
        let (world, stores, server) = world()
        #expect(try await world.run(RaxxOrder.Disarm.self) == .ok)
        #expect(server.timeouts == [0])
        #expect(world.jsonLines.first?["armed"] as? Bool == false)
        // Nothing was armed from here: nothing to watch for afterwards.
        #expect(try stores.journal().switchWatch() == nil)
    }

    @Test func theNextRunTellsOnceWhichOrdersTheSwitchCancelled() async throws {
        let (world, stores, _) = world()
        try stores.journal().noteSwitch(
            accountID: Fixtures.accountID, timeout: 30, firesAt: Fixtures.now.addingTimeInterval(30),
            at: Fixtures.now.addingTimeInterval(-60))
        let cancelled = Components.Schemas.Event(
            seq: 41, _type: .orderCancelled, createdAt: Fixtures.now.addingTimeInterval(30),
            title: "Cancelled: switch not renewed in time", orderId: "ord-9", symbol: "MSFT", side: .buy, qty: 2,
            reason: "connection_lost")
        let cursors = Cursors()
        world.api.onListEvents { input in
            cursors.append(input.query.cursor ?? -1)
            #expect(input.query._type == [.orderCancelled])
            let fresh = (input.query.cursor ?? 0) < 41
            return .ok(.init(body: .json(.init(events: fresh ? [cancelled] : [], cursor: fresh ? 41 : input.query.cursor ?? 0, hasMore: false))))
        }
        world.api.onListOrders { _ in .ok(.init(body: .json(.init(orders: [])))) }
        #expect(try await world.run(RaxxOrder.List.self) == .ok)
        let said = world.stderr.contents
        let at = PeopleText.moment(Fixtures.now.addingTimeInterval(30), now: try #require(world.clock).now, timeZone: .gmt)
        #expect(
            said == """
                raxx-order: The server cancelled 1 order while this device was away:
                raxx-order: order ord-9 (buy 2 MSFT) was cancelled by the server at \(at): \
                the dead man's switch fired because it was not renewed in time.

                """)
        #expect(try await world.run(RaxxOrder.List.self) == .ok)
        #expect(world.stderr.contents == said)  // once
        #expect(cursors.values == [0, 41])
        // Long after the deadline, one more look, then nothing more is asked.
        world.clock?.advance(by: 300)  // within the access token's life, past the deadline and its grace
        #expect(try await world.run(RaxxOrder.List.self) == .ok)
        #expect(try stores.journal().switchWatch() == nil)
        #expect(try await world.run(RaxxOrder.List.self) == .ok)
        #expect(cursors.values == [0, 41, 41])
    }

    @Test func placeWithCancelAfterArmsBeforeTheFirstOrderAndSaysUntilWhen() async throws {
        let (world, _, server) = world()
        let stores = MemoryStores(cache: try Fixtures.filledCache())
        world.stores = stores
        world.ids = ["0f8e2c1d-aaaa-bbbb-cccc-000000000001"]
        world.api.onGetSession { _ in .ok(.init(body: .json(Fixtures.serverSession()))) }
        world.api.onCheckOrders(PlaceTests.checks)
        world.api.onPlaceOrder { [self] _ in .created(.init(body: .json(order("ord-1", .open)))) }
        #expect(
            try await world.run(
                RaxxOrder.Place.self,
                [
                    "--symbol", "MSFT", "--side", "buy", "--qty", "2", "--type", "limit",
                    "--limit-price", "1.00", "--tif", "gtc", "--cancel-after", "60s",
                ]) == .ok)
        let operations = world.api.operations
        #expect(operations.firstIndex(of: "cancelOrdersAfter")! < operations.firstIndex(of: "placeOrder")!)
        #expect(server.timeouts == [60])
        #expect(
            world.stderr.contents.contains("The dead man's switch is armed: the server cancels the open orders at 10:01 (in 1m) "),
            "\(world.stderr.contents)")
        #expect(try stores.journal().switchWatch()?.timeout == 60)
    }
}

final class Cursors: @unchecked Sendable {
    private let lock = NSLock()
    private var _values: [Int64] = []
    func append(_ v: Int64) { lock.withLock { _values.append(v) } }
    var values: [Int64] { lock.withLock { _values } }
}

import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxOrderCommand
import RaxxStore
import RaxxTestSupport
import Testing

/// `raxx-order place` in-process: validated, journalled, sent; refusals before anything goes.
@Suite struct PlaceTests {
    /// A signed-in world with a fresh cache, an online paper account and AAPL on the market.
    func world(_ stores: MemoryStores? = nil) throws -> (TestWorld, MemoryStores) {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now.addingTimeInterval(5))
        world.keystore = Fixtures.signedIn()
        world.ids = ["0f8e2c1d-aaaa-bbbb-cccc-000000000001", "1a2b3c4d-aaaa-bbbb-cccc-000000000002"]
        let stores = try stores ?? MemoryStores(cache: try Fixtures.filledCache())
        world.stores = stores
        world.api.onGetSession { _ in .ok(.init(body: .json(Fixtures.serverSession()))) }
        world.api.onCheckOrders(Self.checks)
        return (world, stores)
    }

    /// The server's dry run as the sandbox answers it, for AAPL and MSFT at 200: another symbol is
    /// refused, an order above 100,000 needs a step-up, a buy above 500,000 would be rejected.
    @Sendable static func checks(_ input: Operations.CheckOrders.Input) throws -> Operations.CheckOrders.Output {
        guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
        return .ok(
            .init(
                body: .json(
                    .init(
                        checks: request.orders.map { order in
                            guard ["AAPL", "MSFT"].contains(order.symbol) else {
                                return .init(
                                    clientOrderId: order.clientOrderId, verdict: .refused, code: "unknown_symbol",
                                    message: "The market has no such instrument. \(order.symbol)", stepUpRequired: false)
                            }
                            let notional = order.qty * 200
                            let action = OrderAction(
                                clientOrderID: order.clientOrderId, symbol: order.symbol, side: order.side, qty: order.qty,
                                type: order._type, limitPrice: order.limitPrice, tif: order.tif, mode: order.mode)
                            return .init(
                                clientOrderId: order.clientOrderId, verdict: order.side == .buy && notional > 500_000 ? .wouldReject : .wouldPlace,
                                code: order.side == .buy && notional > 500_000 ? "insufficient_buying_power" : nil,
                                notional: "\(notional).00", stepUpRequired: notional > 100_000, actionHash: notional > 100_000 ? action.hash : nil)
                        }))))
    }

    @Test func placesOneOrderFromFlagsJournalledFirst() async throws {
        let (world, stores) = try world()
        world.api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            #expect(request.clientOrderId == "raxx-0f8e2c1d-aaaa-bbbb")
            #expect(request.mode == .paper && request.side == .buy && request._type == .limit && request.limitPrice == "187.5")
            #expect(request.notAfter == Fixtures.now.addingTimeInterval(15))
            // The journal holds it before the server does.
            #expect(try stores.journal().unresolved(accountID: Fixtures.accountID).map(\.clientOrderID) == [request.clientOrderId])
            return .created(.init(body: .json(Fixtures.order(clientOrderID: request.clientOrderId, type: .limit, limitPrice: "187.5", status: .open))))
        }
        #expect(
            try await world.run(
                RaxxOrder.Place.self,
                [
                    "--symbol", "aapl", "--side", "buy", "--qty", "10", "--type", "limit",
                    "--limit-price", "187.5",
                ]) == .ok)
        let line = try #require(world.jsonLines.first)
        #expect(line["result"] as? String == "placed" && line["status"] as? String == "open" && line["symbol"] as? String == "AAPL")
        #expect(try stores.journal().unresolved(accountID: Fixtures.accountID).isEmpty)
        #expect(world.api.operations == ["getSession", "checkOrders", "placeOrder"])
    }

    /// A market order that filled at once says at what price, on a terminal and in JSON.
    @Test func aFilledOrderSaysItsFillPrice() async throws {
        for terminal in [true, false] {
            let (world, _) = try world()
            world.stdoutIsTTY = terminal
            world.terminalColumns = 120
            world.environment["NO_COLOR"] = "1"
            world.api.onPlaceOrder { input in
                guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
                return .created(.init(body: .json(Fixtures.order(clientOrderID: request.clientOrderId, status: .filled))))
            }
            #expect(try await world.run(RaxxOrder.Place.self, ["--symbol", "AAPL", "--side", "buy", "--qty", "10"]) == .ok)
            if terminal {
                let lines = world.stdout.contents.split(separator: "\n")
                #expect(lines.first?.contains("FILL PRICE") == true && lines.last?.contains("filled      187.25") == true, "\(world.stdout.contents)")
            } else {
                #expect(world.jsonLines.first?["avg_fill_price"] as? String == "187.25")
            }
        }
    }

    /// A batch without ids placed in the last day: on a terminal the trader is asked, and only a
    /// yes sends it again; a no sends nothing (2); after a day it is a new batch.
    @Test func aRerunOnATerminalIsAskedAboutFirst() async throws {
        let (world, stores) = try world()
        world.ids = (1...6).map { "0f8e2c1d-aaaa-bbbb-cccc-00000000000\($0)" }
        world.api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            return .created(.init(body: .json(Fixtures.order(clientOrderID: request.clientOrderId, status: .filled))))
        }
        let order = ["--symbol", "AAPL", "--side", "buy", "--qty", "1"]
        #expect(try await world.run(RaxxOrder.Place.self, order) == .ok)
        #expect(world.api.operations.filter { $0 == "placeOrder" }.count == 1)
        world.stderrIsTTY = true
        world.answer = false
        #expect(try await world.run(RaxxOrder.Place.self, order) == .cancelled)
        #expect(
            world.questions.count == 1 && world.questions[0].contains("placed already at") && world.questions[0].hasSuffix("[y/N] "),
            "\(world.questions)")
        #expect(world.api.operations.filter { $0 == "placeOrder" }.count == 1, "a no sends nothing")
        world.answer = true
        #expect(try await world.run(RaxxOrder.Place.self, order) == .ok)
        #expect(world.api.operations.filter { $0 == "placeOrder" }.count == 2)
        // Remembered for a day, no longer.
        let fingerprint = try #require(stores.journal().placedBatchFingerprints(accountID: Fixtures.accountID).first)
        let now = try #require(world.clock?.now)
        #expect(try stores.journal().placedBatch(fingerprint: fingerprint, accountID: Fixtures.accountID, now: now) != nil)
        #expect(
            try stores.journal().placedBatch(
                fingerprint: fingerprint, accountID: Fixtures.accountID,
                now: now.addingTimeInterval(OrderJournal.batchMemory + 1)) == nil)
        #expect(try stores.journal().placedBatch(fingerprint: fingerprint, accountID: "another-account", now: now) == nil)
    }

    @Test func aBadLineExits65AndSendsNothing() async throws {
        let (world, _) = try world()
        world.stdin = #"{"symbol":"AAPL","side":"buy","qty":1}"# + "\n" + #"{"symbol":"AAPL","side":"hold","qty":1}"#
        #expect(try await world.run(RaxxOrder.Place.self, ["--format", "text"]) == .dataError)
        #expect(world.stderr.contents == "raxx-order: line 2, field 'side': must be buy or sell, not 'hold'; no order was sent\n")
        #expect(world.api.calls.isEmpty)
    }

    /// Every bad line is named in one run, not the first alone.
    @Test func everyBadLineIsNamedInOneRun() async throws {
        let (world, _) = try world()
        world.stdin = [
            #"{"symbol":"AAPL","side":"hold","qty":1}"#, #"{"symbol":"AAPL","side":"buy","qty":1}"#, "not json",
            #"{"symbol":"AAPL","side":"buy","qty":0}"#,
        ].joined(separator: "\n")
        #expect(try await world.run(RaxxOrder.Place.self, ["--format", "text"]) == .dataError)
        #expect(
            world.stderr.contents == """
                raxx-order: 3 lines are bad; no order was sent:
                  line 1, field 'side': must be buy or sell, not 'hold'
                  line 3: is not a JSON object of order fields
                  line 4, field 'qty': must be positive, not 0

                """)
        #expect(world.api.calls.isEmpty)
    }

    /// The server's check refuses every unknown symbol of the batch at once, before anything is sent.
    @Test func everyUnknownSymbolIsNamedBeforeAnythingIsSent() async throws {
        let (world, _) = try world()
        world.stdin = ["ZZZZ", "AAPL", "QQQQ"].map { #"{"symbol":"\#($0)","side":"buy","qty":1,"client_order_id":"\#($0)-1"}"# }
            .joined(separator: "\n")
        #expect(try await world.run(RaxxOrder.Place.self, ["--format", "text"]) == .dataError)
        #expect(world.stderr.contents.contains("2 lines are bad; no order was sent:\n  line 1, field 'symbol': 'ZZZZ' is not on the market"))
        #expect(world.stderr.contents.contains("\n  line 3, field 'symbol': 'QQQQ' is not on the market"))
        #expect(world.api.operations == ["getSession", "checkOrders"])
    }

    /// `--dry-run` is the server's check: each order's verdict, nothing placed, no PIN.
    @Test func aDryRunShowsTheServersVerdictsAndPlacesNothing() async throws {
        let (world, stores) = try world()
        world.stdin = [
            #"{"symbol":"AAPL","side":"buy","qty":10,"client_order_id":"a"}"#,
            #"{"symbol":"AAPL","side":"buy","qty":600,"client_order_id":"b"}"#,
            #"{"symbol":"AAPL","side":"buy","qty":5000,"client_order_id":"c"}"#,
        ].joined(separator: "\n")
        #expect(try await world.run(RaxxOrder.Place.self, ["--dry-run"]) == .failure)
        #expect(
            world.jsonLines.map { "\($0["client_order_id"]!) \($0["verdict"]!) \($0["step_up_required"] as? Bool ?? false)" }
                == ["a would_place false", "b would_place true", "c would_reject true"])
        #expect(world.jsonLines.last?["code"] as? String == "insufficient_buying_power")
        #expect(world.stderr.contents.contains("1 of 3 orders would be rejected."))
        #expect(world.api.operations == ["getSession", "checkOrders"])
        #expect(try stores.journal().unresolved(accountID: Fixtures.accountID).isEmpty)
    }

    /// The large orders that would pass are confirmed up front with one PIN; an order the server
    /// would reject is not sent, and no step-up is asked for it.
    @Test func largeOrdersAreConfirmedOnceAndWouldBeRejectedOnesAreNotSent() async throws {
        let (world, _) = try world()
        world.stdin = [
            #"{"symbol":"AAPL","side":"buy","qty":5000,"client_order_id":"big-reject"}"#,
            #"{"symbol":"AAPL","side":"sell","qty":600,"client_order_id":"big-1"}"#,
            #"{"symbol":"AAPL","side":"sell","qty":700,"client_order_id":"big-2"}"#,
        ].joined(separator: "\n")
        world.api.onStepUpOptions { _ in .ok(.init(body: .json(.init(challenge: "c2VydmVyLWNoYWxsZW5nZQ", rpId: "raxx.app")))) }
        // This device has no passkey: the step-up is refused before any order goes, for the two
        // large orders that would pass, and not for the one that would be rejected.
        #expect(try await world.run(RaxxOrder.Place.self, ["--format", "text"]) == .notPermitted)
        #expect(world.stderr.contents.contains("2 orders are large (lines 2 and 3): confirm them with your passkey, one PIN for all."))
        #expect(world.api.operations == ["getSession", "checkOrders", "stepUpOptions"])
    }

    @Test func liveIsRefusedBeforeAnythingElse() async throws {
        let (world, _) = try world()
        #expect(try await world.run(RaxxOrder.Place.self, ["--symbol", "AAPL", "--side", "buy", "--qty", "1", "--live"]) == .notPermitted)
        #expect(world.api.calls.isEmpty)
    }

    @Test func signedOutExits4AndSendsNothing() async throws {
        let (world, _) = try world()
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxOrder.Place.self, ["--symbol", "AAPL", "--side", "buy", "--qty", "1"]) == .signInRequired)
        #expect(world.api.calls.isEmpty)
    }

    @Test func offlineExits69AndSendsNothing() async throws {
        let (world, stores) = try world()
        world.api.onGetSession { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused") }
        #expect(try await world.run(RaxxOrder.Place.self, ["--symbol", "AAPL", "--side", "buy", "--qty", "1", "--format", "text"]) == .unavailable)
        #expect(world.stderr.contents.hasPrefix("raxx-order: This action requires an internet connection. Try again when online."))
        #expect(world.api.operations == ["getSession"])
        #expect(try stores.journal().unresolved(accountID: Fixtures.accountID).isEmpty)
    }

    /// A negative number is the option's value, refused for what it is (not "Missing value").
    @Test func aNegativeQuantityIsRefusedForWhatItIs() async throws {
        let (world, _) = try world()
        #expect(try await world.run(RaxxOrder.Place.self, ["--symbol", "AAPL", "--side", "buy", "--qty", "-1", "--format", "text"]) == .usage)
        #expect(world.stderr.contents == "raxx-order: --qty must be positive, not -1.\n")
        #expect(world.api.calls.isEmpty)
        // A flag left out is a usage error naming the flag.
        let (other, _) = try self.world()
        #expect(try await other.run(RaxxOrder.Place.self, ["--symbol", "AAPL", "--qty", "1", "--format", "text"]) == .usage)
        #expect(other.stderr.contents == "raxx-order: --side is missing.\n")
    }

    @Test func anUnknownSymbolExits65NamingTheLine() async throws {
        let (world, _) = try world()
        world.stdin = #"{"symbol":"AAPL","side":"buy","qty":1}"# + "\n" + #"{"symbol":"ZZZZ","side":"buy","qty":1}"#
        #expect(try await world.run(RaxxOrder.Place.self) == .dataError)
        #expect(world.stderr.contents.contains("line 2, field 'symbol'"))
        #expect(!world.api.operations.contains("placeOrder"))
    }

    @Test func aStepUpThisDeviceCannotGiveIsRefusedAndNothingIsPlaced() async throws {
        let (world, _) = try world()
        world.api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            guard let grant = input.headers.raxxStepUpGrant else {
                let hash = OrderAction(
                    clientOrderID: request.clientOrderId, symbol: request.symbol, side: request.side, qty: request.qty,
                    type: request._type, limitPrice: request.limitPrice, tif: request.tif, mode: request.mode
                ).hash
                return .default(statusCode: 403, Fixtures.problem(403, code: "step_up_required", actionHash: hash))
            }
            #expect(grant == "grant-1")
            return .created(.init(body: .json(Fixtures.order(clientOrderID: request.clientOrderId, status: .filled))))
        }
        world.api.onStepUpOptions { _ in .ok(.init(body: .json(.init(challenge: "c2VydmVyLWNoYWxsZW5nZQ", rpId: "raxx.app")))) }
        // This device has no passkey: the step-up, asked before the order goes, is refused and
        // nothing is sent.
        #expect(try await world.run(RaxxOrder.Place.self, ["--symbol", "AAPL", "--side", "buy", "--qty", "1000", "--json"]) == .notPermitted)
        #expect(world.api.operations == ["getSession", "checkOrders", "stepUpOptions"])
        #expect(world.stderr.contents.contains("step_up_refused"))
    }

    @Test func aLostReplyIsUnknownExits69AndStaysInTheJournal() async throws {
        let (world, stores) = try world()
        world.api.onPlaceOrder { _ in throw TransportFailure(kind: .offlineSoft, curlCode: 28, detail: "timed out") }
        #expect(try await world.run(RaxxOrder.Place.self, ["--symbol", "AAPL", "--side", "buy", "--qty", "1"]) == .unavailable)
        #expect(world.jsonLines.first?["result"] as? String == "unknown")
        #expect(try stores.journal().unresolved(accountID: Fixtures.accountID).map(\.state) == [.unknown])
    }

    /// An order is in the journal before it goes, and so is every answer but the one just before
    /// it: that one is written with the next order's entry, while this order is at the server.
    @Test func everyAnswerButTheLastIsJournalledBeforeAnOrderGoes() async throws {
        let (world, stores) = try world()
        world.ids = (1...4).map { "0f8e2c1d-aaaa-bbbb-cccc-00000000000\($0)" }
        world.stdin = (1...4).map { #"{"symbol":"AAPL","side":"buy","qty":1,"client_order_id":"c-\#($0)"}"# }.joined(separator: "\n")
        let seen = Recorder<[String]>()
        world.api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            seen.append(try stores.journal().unresolved(accountID: Fixtures.accountID).map(\.clientOrderID))
            switch request.clientOrderId {
            case "c-2":
                return .default(statusCode: 422, Fixtures.problem(422, code: "insufficient_buying_power"))
            case "c-3":
                throw TransportFailure(kind: .offlineSoft, curlCode: 28, detail: "timed out")
            default:
                return .created(.init(body: .json(Fixtures.order(clientOrderID: request.clientOrderId, status: .filled))))
            }
        }
        #expect(try await world.run(RaxxOrder.Place.self) == .unavailable)
        // When c-k goes it is unsettled, and nothing before c-(k-1) is; c-(k+1) may be written
        // already (ahead, on the journal's thread).
        #expect(seen.values.count == 3)
        for (k, unsettled) in seen.values.enumerated() {
            let allowed = Set((k...(k + 2)).map { "c-\($0)" })
            #expect(unsettled.contains("c-\(k + 1)") && Set(unsettled).isSubset(of: allowed), "at c-\(k + 1): \(unsettled)")
        }
        #expect(world.jsonLines.map { $0["result"] as? String } == ["placed", "rejected", "unknown", "not_sent"])
        // The lost reply stays to be looked up; the others are settled, and c-4 (its entry
        // written ahead) never went.
        #expect(try stores.journal().unresolved(accountID: Fixtures.accountID).map { "\($0.clientOrderID) \($0.state)" } == ["c-3 unknown"])
        #expect(world.api.operations.filter { $0 == "placeOrder" }.count == 3)
    }

    @Test func theLastAnswerOfABatchIsJournalled() async throws {
        let (world, stores) = try world()
        world.stdin = (1...2).map { #"{"symbol":"AAPL","side":"sell","qty":1,"client_order_id":"c-\#($0)"}"# }.joined(separator: "\n")
        world.api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            return .created(.init(body: .json(Fixtures.order(clientOrderID: request.clientOrderId, side: .sell, status: .open))))
        }
        #expect(try await world.run(RaxxOrder.Place.self) == .ok)
        #expect(try stores.journal().unresolved(accountID: Fixtures.accountID).isEmpty)
    }

    @Test func theDeadlineIsTheServersTime() async throws {
        let (world, _) = try world()
        world.serverSkew = 3600  // the server's clock is an hour ahead of this machine's
        world.api.onPlaceOrder { input in
            guard case .json(let request) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            // 10 s from now by the server's clock, which judges it; by this machine's it would have
            // passed an hour before it arrived.
            #expect(request.notAfter == Fixtures.now.addingTimeInterval(5 + 3600 + 10))
            return .created(.init(body: .json(Fixtures.order(clientOrderID: request.clientOrderId, status: .filled))))
        }
        #expect(try await world.run(RaxxOrder.Place.self, ["--symbol", "AAPL", "--side", "buy", "--qty", "1"]) == .ok)
    }
}

/// What a stub saw, call by call.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [Value] = []
    func append(_ value: Value) { lock.withLock { seen.append(value) } }
    var values: [Value] { lock.withLock { seen } }
}

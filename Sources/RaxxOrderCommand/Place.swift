import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxOrders
import RaxxStore
import RaxxWire

extension RaxxOrder {
    /// `raxx-order place`: one order from flags, or many as JSON Lines on stdin.
    public struct Place: RaxxOrderVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "place",
            abstract: "Place paper orders: one from flags, or many as JSON Lines on stdin.",
            discussion: """
                Stdin takes one object per line with the fields symbol, side, qty, type, limit_price, tif and \
                client_order_id. Before anything is sent, in this order: the whole batch is validated (bad \
                lines exit 65, each named with its field, and no order is sent; a bad flag is a usage error, 64); \
                live trading is refused (77); a session is needed (4); the server must be reachable (69); a \
                cache older than 60 s, or whose last refresh failed offline, is refreshed first; and the server \
                checks the whole batch (a dry run: symbol, market, buying power, position, step-up), each order \
                against what the ones before it leave. An order the server refuses (an unknown symbol) stops the \
                batch before anything is sent (65); an order it would reject (buying power, position) is not \
                sent and is reported not_sent with its code; the large orders that would pass are confirmed \
                with the passkey's PIN once, for all of them, before the first order goes. With --dry-run the \
                check is all that happens: each order's verdict (would_place, would_reject, refused, \
                already_placed), its notional and whether it needs a step-up. Every order carries a client_order_id \
                (generated if absent) and a deadline (--deadline, default 10s) after which the server refuses \
                it; it is journalled before it is sent. Re-running the same orders never places one twice: \
                lines with their own client_order_id are placed once by the server, and a batch with lines \
                without one is remembered by its content for a day, so running it again is refused before \
                anything is sent (65, naming when it was placed and its orders; on a terminal you are asked \
                whether to place it again), unless --again says to. \
                Orders above the server's step-up threshold ask for the passkey's PIN. Results come back in \
                input order: placed, rejected, unknown (the reply was lost: exit 69, look it up with reconcile) \
                or not_sent. With --cancel-after the session's dead man's switch is armed before the first order \
                goes, so the server cancels the resting orders unless it is renewed in time (raxx-order heartbeat, \
                from a loop or cron) or disarmed (raxx-order disarm). With --watch the placed orders are followed \
                as raxx-order watch does, the switch armed and renewed meanwhile. 
                """ + connectivity.helpLine
        )

        @Option(help: ArgumentHelp("A ticker (AAPL) or an OCC option symbol (AAPL261218C00190000).", valueName: "symbol"))
        var symbol: String?
        @Option(help: ArgumentHelp("buy or sell.", valueName: "side"), completion: .list(Components.Schemas.Side.allCases.map(\.rawValue)))
        var side: String?
        @Option(parsing: .unconditional, help: ArgumentHelp("Whole shares or contracts.", valueName: "n"))
        var qty: Int64?
        @Option(help: ArgumentHelp("market (default) or limit.", valueName: "type"), completion: .list(Components.Schemas.OrderType.allCases.map(\.rawValue)))
        var type: String?
        @Option(name: .customLong("limit-price"), parsing: .unconditional, help: ArgumentHelp("The limit price, for a limit order.", valueName: "price"))
        var limitPrice: String?
        @Option(help: ArgumentHelp("day (default) or gtc.", valueName: "tif"), completion: .list(Components.Schemas.TimeInForce.allCases.map(\.rawValue)))
        var tif: String?
        @Option(name: .customLong("client-order-id"), help: ArgumentHelp("Your id for the order, for safe retries (default: generated).", valueName: "id"))
        var clientOrderID: String?
        @Option(help: ArgumentHelp("How long the server may take to receive an order before refusing it.", valueName: "duration"))
        var deadline = RaxxDuration.seconds(10)
        @Flag(name: .customLong("dry-run"), help: "Have the server check the orders (symbol, market, buying power, position, step-up); place nothing.")
        var dryRun = false
        @Flag(help: "Place the batch even though the same orders, without ids of their own, were placed in the last day.")
        var again = false
        @Flag(help: "Ask for live trading (always refused: orders are paper only).")
        var live = false
        @Flag(help: "Follow the placed orders until each is final, with the dead man's switch armed (see raxx-order watch).")
        var watch = false
        @Flag(name: .customLong("keep-armed"), help: "With --watch: when the watch is stopped (Ctrl-C), leave the switch armed instead of disarming it.")
        var keepArmed = false
        @Option(
            name: .customLong("cancel-after"),
            help: ArgumentHelp(
                """
                Arm the server's dead man's switch first: unless renewed (raxx-order heartbeat) within this time, 5s to 10m, the server \
                cancels the orders. With --watch: default 30s, or RAXX_CANCEL_AFTER.
                """,
                valueName: "duration"))
        var cancelAfter: RaxxDuration?

        @OptionGroup var pin: PINOptions
        @OptionGroup public var global: GlobalOptions

        public init() {}

        /// A refresh first when the cache is older than this.
        static let freshness = RaxxDuration.seconds(60)

        public func validate() throws {
            guard deadline.milliseconds > 0 else { throw ValidationError("--deadline takes a duration such as 10s or 2m.") }
            try validateCancelAfter(cancelAfter)
        }

        /// The batch, from the flags or from stdin. Flag values are validated like a line of input,
        /// with the same messages, but a bad one is a usage error naming the flag.
        func intents(_ context: CommandContext) throws -> [OrderIntent] {
            let newID = { "raxx-" + context.world.newID().prefix(18) }
            if symbol != nil || side != nil || qty != nil {
                return [
                    try OrderIntent(
                        line: 1, symbol: symbol, side: side, qty: qty.map(JSONScalar.integer), type: type,
                        limitPrice: limitPrice.map(JSONScalar.string), tif: tif, clientOrderID: clientOrderID,
                        newID: newID
                    ) { field, message in
                        RaxxError.usage("--\(field.replacingOccurrences(of: "_", with: "-")) \(message).")
                    }
                ]
            }
            guard !context.io.stdinIsTTY else {
                throw RaxxError.usage("Give an order with --symbol, --side and --qty, or JSON Lines on stdin.")
            }
            guard let text = String(validating: try context.io.stdin.readAll(), as: UTF8.self) else {
                throw RaxxError.badInput("stdin is not UTF-8 text.")
            }
            return try OrderIntent.parse(jsonLines: text, newID: newID)
        }

        public func run(_ context: CommandContext) async throws {
            // 1. Input: the whole batch, before anything else.
            let intents = try intents(context)
            // 2. Mode.
            if live { throw RaxxError(code: .liveTradingRefused, message: OrderDesk.liveRefusal) }
            // 3. Sign-in.
            let session = try context.storedSession()
            // 3b. A re-run: the same orders without ids of their own, placed in the last day.
            let fingerprint = BatchFingerprint(intents)
            if let fingerprint, !again, !dryRun {
                try Self.refuseRerun(intents, fingerprint, accountID: session.accountID, context: context)
            }
            // 4. Connectivity, and the account's mode.
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            if try await api.getSession().checked().ok.body.json.account.mode == .live {
                throw RaxxError(code: .liveTradingRefused, message: OrderDesk.liveRefusal)
            }
            // One raxx-order at a time settles and sends, or one would cancel the other's order in flight.
            let stores = try context.stores
            let lock = try await stores.lock(.orders, wait: .seconds(60))
            defer { lock.release() }
            var desk = OrderDesk(
                client: api, journal: try stores.journal(), accountID: session.accountID, clock: context.clock, serverClock: context.world.serverNow,
                deadline: deadline)
            let raw = try context.signedInRaw()
            desk.rawOrders = raw
            // 5. What an earlier run left unknown, and freshness.
            for settled in try await desk.reconcile(moment: context.peopleMoment) {
                context.say("raxx-order: order \(settled.client_order_id): \(settled.message)")
            }
            try await desk.refreshIfStale(
                stores, accountID: session.accountID, freshness: Self.freshness,
                retention: context.configuration.cacheRetention, rawPages: raw)
            // 6. The server's dry run of the whole batch, before any order goes or any PIN is asked.
            let checks = try await desk.check(intents)
            try Self.refuseRefused(intents, checks)
            if dryRun {
                try context.emit(zip(intents, checks).map(CheckResult.init), columns: checkColumns) {
                    [
                        "\($0.line)", $0.client_order_id, $0.symbol, $0.side.rawValue, "\($0.qty)", $0.verdict.rawValue,
                        $0.notional.map { PeopleText.money($0) } ?? "-", $0.step_up_required ? "yes" : "-", $0.code ?? "-",
                    ]
                }
                context.say("Dry run: nothing was placed.")
                let failing = checks.filter { $0.verdict == .wouldReject }.count
                if failing > 0 {
                    throw RaxxError(code: .wouldReject, message: "\(failing) of \(checks.count) order\(checks.count == 1 ? "" : "s") would be rejected.")
                }
                return
            }
            // Orders the server would reject are not sent: the trader hears why, and no step-up is
            // asked for them. (Only in a batch the server checked in one piece: past 1,000 orders each
            // piece is checked apart from the fills of the ones before it, and the server decides.)
            var skipped: [Int: PlacementResult] = [:]
            var sending: [OrderIntent] = []
            let checkedWhole = intents.count <= OrderDesk.checkBatch
            for (index, (intent, check)) in zip(intents, checks).enumerated() {
                if check.verdict == .wouldReject, checkedWhole {
                    skipped[index] = .notSent(
                        intent, code: check.code,
                        message: "Not sent: the server's check says it would be rejected" + (check.message.map { ": " + $0 } ?? "."))
                } else {
                    sending.append(intent)
                }
            }

            // 7. The step-ups, all before the first order (and before the switch is armed, so that no
            // time spent typing a PIN runs its timeout down), with one PIN: the large orders that pass.
            let ceremonies = try context.ceremonies()
            let prompt = context.pinPromptAskingOnce(pin.source)
            let large = zip(intents, checks).filter { $0.1.verdict == .wouldPlace && $0.1.stepUpRequired }.map(\.0)
            let grants = Grants()
            if !large.isEmpty {
                if context.format == .text || context.io.stderrIsTTY {
                    context.say(
                        large.count == 1
                            ? """
                            Order on line \(large[0].line) (\(large[0].side.rawValue) \(large[0].qty) \(large[0].symbol)) is large: confirm \
                            it with your passkey.
                            """
                            : "\(large.count) orders are large (lines \(Self.lineList(large))): confirm them with your passkey, one PIN for all.")
                }
                for intent in large {
                    let grant = try await ceremonies.stepUp(actionHash: intent.action.hash, pin: prompt)
                    grants.keep(grant.grant, until: grant.expiresAt, for: intent.action.hash)
                }
            }

            // 8. The dead man's switch, armed before the first order so that every order is under it.
            let timeout = try (cancelAfter ?? (watch ? context.configuration.cancelAfter ?? CancelAfterSwitch.watchDefault : nil))
                .map(CancelAfterSwitch.seconds)
            let deadMan = CancelAfterSwitch(api: api, journal: try stores.journal(), accountID: session.accountID, clock: context.clock)
            let armed = try await (sending.isEmpty ? nil : timeout).asyncMap { try await deadMan.arm(timeout: $0) }

            // A batch on a terminal shows its progress (a single order is over too soon to need it).
            let line = context.progressLine("placing", unit: "orders", total: sending.count, enabled: sending.count > 1)
            let (sent, stop) = await desk.place(sending, progress: { line.update(done: $0) }) { intent, actionHash in
                // A grant asked for above, while it has time left; else a new one (the same PIN).
                if let grant = grants.take(actionHash, at: context.world.serverNow()) { return grant }
                line.clear()
                return try await ceremonies.stepUp(actionHash: actionHash, pin: prompt).grant
            }
            line.finish()
            var results: [PlacementResult] = []
            var next = sent.makeIterator()
            for index in intents.indices {
                if let result = skipped[index] { results.append(result) } else if let result = next.next() { results.append(result) }
            }
            // What went to the server is remembered by the batch's content, so that running it again
            // by accident is refused (and with --again, what was placed last is what is named).
            let reached = results.filter { $0.outcome == .placed || $0.outcome == .unknown }
            if let fingerprint, !reached.isEmpty {
                try stores.journal().recordBatch(
                    fingerprint: fingerprint.value, accountID: session.accountID,
                    orders: reached.map { $0.order_id ?? $0.client_order_id }, at: context.clock())
            }
            try context.emit(results, columns: resultColumns) { resultRow($0) }
            if let stop { throw stop }
            let placed = results.filter { $0.outcome == .placed }.compactMap(\.order_id)
            if let timeout, watch {
                // Another raxx-order may place and settle while this one watches.
                lock.release()
                if placed.isEmpty {
                    _ = try? await deadMan.disarm()
                } else {
                    try await followOrders(placed, timeout: timeout, keepArmed: keepArmed, api: api, accountID: session.accountID, context: context)
                }
            } else if let firesAt = armed?.firesAt {
                context.say(
                    "raxx-order: The dead man's switch is armed: the server cancels the open orders at \(context.peopleMoment(firesAt)) "
                        + "unless it is renewed (raxx-order heartbeat) or disarmed (raxx-order disarm).")
            }
            let refused = results.filter { $0.outcome != .placed }.count
            if refused > 0 {
                throw RaxxError(code: .rejected, message: "\(refused) of \(results.count) order\(results.count == 1 ? " was" : "s were") not placed.")
            }
        }

        /// Refuses a batch that the journal says was placed in the last day (its lines carry no ids
        /// of their own, so the server would place every order again), before anything is sent: on
        /// a terminal the trader is asked whether to place it again; elsewhere it takes --again.
        static func refuseRerun(
            _ intents: [OrderIntent], _ fingerprint: BatchFingerprint, accountID: String,
            context: CommandContext
        ) throws {
            guard
                let earlier = try context.stores.journal().placedBatch(
                    fingerprint: fingerprint.value, accountID: accountID,
                    now: context.clock())
            else { return }
            let what = intents.count == 1 ? "This order" : "These \(intents.count) orders"
            let ids = earlier.orders.prefix(5).joined(separator: ", ") + (earlier.orders.count > 5 ? " and \(earlier.orders.count - 5) more" : "")
            let placed =
                "\(what), without client_order_id, \(intents.count == 1 ? "was" : "were") placed already at "
                + "\(context.peopleTime(earlier.placedAt)) (\(earlier.orders.count == 1 ? "order" : "orders") \(ids))"
            if context.io.stderrIsTTY, let yes = context.world.pinEntry.confirm(placed + ". Place \(intents.count == 1 ? "it" : "them") again? [y/N] ") {
                guard yes else { throw RaxxError(code: .cancelled, message: "Nothing was sent.") }
                return
            }
            throw RaxxError(
                code: .alreadyPlaced, message: placed + "; nothing was sent.",
                hint: "To place \(intents.count == 1 ? "it" : "them") again on purpose: raxx-order place --again "
                    + "(or give each line its own client_order_id).")
        }

        /// "3, 7 and 9" (the first ten, then how many more).
        static func lineList(_ intents: [OrderIntent]) -> String {
            let lines = intents.prefix(10).map { "\($0.line)" }
            let more = intents.count > 10 ? " and \(intents.count - 10) more" : ""
            return (lines.count < 2 || !more.isEmpty ? lines.joined(separator: ", ") : lines.dropLast().joined(separator: ", ") + " and " + lines.last!) + more
        }

        /// The orders the server's check refuses outright (an unknown symbol, a client_order_id
        /// used for another order, a malformed order), every one named, before anything is sent.
        static func refuseRefused(_ intents: [OrderIntent], _ checks: [Components.Schemas.OrderCheck]) throws {
            var problems: [RaxxError] = []
            for (intent, check) in zip(intents, checks) where check.verdict == .refused {
                switch check.code {
                case Components.Schemas.ProblemCode.liveTradingRefused.rawValue:
                    throw RaxxError(code: .liveTradingRefused, message: OrderDesk.liveRefusal)
                case Components.Schemas.ProblemCode.unknownSymbol.rawValue:
                    problems.append(.badInput(line: intent.line, field: "symbol", "'\(intent.symbol)' is not on the market (unknown or expired)"))
                case Components.Schemas.ProblemCode.conflict.rawValue:
                    problems.append(
                        .badInput(
                            line: intent.line, field: "client_order_id",
                            "'\(intent.clientOrderID)' was used for another order: use a new client_order_id"))
                default:
                    problems.append(.badInput(line: intent.line, check.message ?? "the server refuses this order (\(check.code ?? "refused"))"))
                }
            }
            if !problems.isEmpty { throw RaxxError.badInput(all: problems, then: "no order was sent") }
        }

        /// One order's dry run, as `--dry-run` prints it.
        struct CheckResult: Encodable {
            var line: Int
            var client_order_id: String
            var symbol: String
            var side: OrderSide
            var qty: Int64
            var verdict: Components.Schemas.OrderVerdict
            var notional: String?
            var step_up_required: Bool
            var code: String?
            var message: String?

            init(_ intent: OrderIntent, _ check: Components.Schemas.OrderCheck) {
                line = intent.line
                client_order_id = intent.clientOrderID
                symbol = intent.symbol
                side = intent.side
                qty = intent.qty
                verdict = check.verdict
                notional = check.notional
                step_up_required = check.stepUpRequired
                code = check.code
                message = check.message
            }
        }

        var checkColumns: [Table.Column] {
            [
                .init("Line", .right), .init("Client order ID"), .init("Symbol"), .init("Side"), .init("Qty", .right), .init("Verdict"),
                .init("Notional", .right), .init("Step-up"), .init("Code"),
            ]
        }
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}

/// The step-up grants asked for before a batch goes, each taken once by the order it binds, and
/// only while it has time left (a grant lives two minutes; a long batch outlasts the first ones).
final class Grants: @unchecked Sendable {
    private let lock = NSLock()
    private var byHash: [String: (grant: String, expiresAt: Date)] = [:]
    /// Time enough left for the order to reach the server.
    static let margin: TimeInterval = 15

    func keep(_ grant: String, until expiresAt: Date, for actionHash: String) {
        lock.withLock { byHash[actionHash] = (grant, expiresAt) }
    }

    func take(_ actionHash: String, at now: Date) -> String? {
        lock.withLock {
            guard let kept = byHash.removeValue(forKey: actionHash), kept.expiresAt.timeIntervalSince(now) > Self.margin else { return nil }
            return kept.grant
        }
    }
}

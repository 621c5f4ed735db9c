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
            client_order_id. Before anything is sent, in this order: the whole batch is validated (a bad \
            line exits 65 naming the line and field, and no order is sent); live trading is refused (77); \
            a session is needed (4); the server must be reachable (69); and a cache older than 60 s, or \
            whose last refresh failed offline, is refreshed first. Every order carries a client_order_id \
            (generated if absent) and a deadline (--deadline, default 10s) after which the server refuses \
            it; it is journalled before it is sent, and re-running the same orders never places one twice. \
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
        @Option(help: ArgumentHelp("buy or sell.", valueName: "side"))
        var side: String?
        @Option(parsing: .unconditional, help: ArgumentHelp("Whole shares or contracts.", valueName: "n"))
        var qty: Int64?
        @Option(help: ArgumentHelp("market (default) or limit.", valueName: "type"))
        var type: String?
        @Option(name: .customLong("limit-price"), parsing: .unconditional, help: ArgumentHelp("The limit price, for a limit order.", valueName: "price"))
        var limitPrice: String?
        @Option(help: ArgumentHelp("day (default) or gtc.", valueName: "tif"))
        var tif: String?
        @Option(name: .customLong("client-order-id"), help: ArgumentHelp("Your id for the order, for safe retries (default: generated).", valueName: "id"))
        var clientOrderID: String?
        @Option(help: ArgumentHelp("How long the server may take to receive an order before refusing it.", valueName: "duration"))
        var deadline = RaxxDuration.seconds(10)
        @Flag(name: .customLong("dry-run"), help: "Validate and show what would be sent; send nothing.")
        var dryRun = false
        @Flag(help: "Ask for live trading (always refused: orders are paper only).")
        var live = false
        @Flag(help: "Follow the placed orders until each is final, with the dead man's switch armed (see raxx-order watch).")
        var watch = false
        @Option(name: .customLong("cancel-after"),
                help: ArgumentHelp("Arm the server's dead man's switch first: unless renewed (raxx-order heartbeat) within this time, 5s to 10m, the server cancels the orders. With --watch: default 30s, or RAXX_CANCEL_AFTER.",
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

        /// The batch, from the flags or from stdin. Flag values are validated like a line of input
        /// (line 1), with the same messages.
        func intents(_ context: CommandContext) throws -> [OrderIntent] {
            let newID = { "raxx-" + context.world.newID().prefix(18) }
            if symbol != nil || side != nil || qty != nil {
                return [try OrderIntent(line: 1, symbol: symbol, side: side, qty: qty.map(JSONScalar.integer), type: type,
                                        limitPrice: limitPrice.map(JSONScalar.string), tif: tif, clientOrderID: clientOrderID,
                                        newID: newID)]
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
            if live { throw RaxxError.notPermitted(code: "live_trading_refused", OrderDesk.liveRefusal) }
            if dryRun {
                let notAfter = context.clock().addingTimeInterval(deadline.seconds)
                try context.emit(intents.map { $0.request(notAfter: notAfter) }, columns: [.init("Client order ID"), .init("Symbol"), .init("Side"), .init("Qty", .right),
                                                                         .init("Type"), .init("Limit", .right)]) {
                    [$0.clientOrderId, $0.symbol, $0.side.rawValue, "\($0.qty)", $0._type.rawValue, $0.limitPrice ?? "-"]
                }
                context.say("Dry run: nothing was sent.")
                return
            }
            // 3. Sign-in.
            let session = try context.storedSession()
            // 4. Connectivity, and the account's mode.
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            if try await api.getSession().checked().ok.body.json.account.mode == .live {
                throw RaxxError.notPermitted(code: "live_trading_refused", OrderDesk.liveRefusal)
            }
            // One raxx-order at a time settles and sends, or one would cancel the other's order in flight.
            let stores = try context.stores
            let lock = try await stores.lock(.orders, wait: .seconds(60))
            defer { lock.release() }
            var desk = OrderDesk(client: api, journal: try stores.journal(), accountID: session.accountID, clock: context.clock, serverClock: context.world.serverNow,
                                 deadline: deadline)
            let raw = try context.signedInRaw()
            desk.rawOrders = raw
            // 5. What an earlier run left unknown, and freshness.
            for settled in try await desk.reconcile() {
                context.say("raxx-order: order \(settled.client_order_id): \(settled.message)")
            }
            try await desk.refreshIfStale(stores, accountID: session.accountID, freshness: Self.freshness,
                                          retention: context.configuration.cacheRetention, rawPages: raw)
            // Every symbol must exist before any order goes.
            try await checkSymbols(intents, api: api)

            // 6. The dead man's switch, armed before the first order so that every order is under it.
            let timeout = try (cancelAfter ?? (watch ? context.configuration.cancelAfter ?? CancelAfterSwitch.watchDefault : nil))
                .map(CancelAfterSwitch.seconds)
            let deadMan = CancelAfterSwitch(api: api, journal: try stores.journal(), accountID: session.accountID, clock: context.clock)
            let armed = try await timeout.asyncMap { try await deadMan.arm(timeout: $0) }

            let ceremonies = try context.ceremonies()
            let prompt = context.pinPrompt(pin.source)
            // A batch on a terminal shows its progress (a single order is over too soon to need it).
            let line = context.progressLine("placing", unit: "orders", total: intents.count, enabled: intents.count > 1)
            let (results, stop) = await desk.place(intents, progress: { line.update(done: $0) }) { intent, actionHash in
                line.clear()
                if context.format == .text || context.io.stderrIsTTY {
                    context.say("Order on line \(intent.line) (\(intent.side.rawValue) \(intent.qty) \(intent.symbol)) is large: confirm it with your passkey.")
                }
                return try await ceremonies.stepUp(actionHash: actionHash, pin: prompt).grant
            }
            line.finish()
            try context.emit(results, columns: resultColumns) {
                ["\($0.line)", $0.client_order_id, $0.symbol, $0.side.rawValue, "\($0.qty)", $0.outcome.rawValue, $0.status?.rawValue ?? "-",
                 $0.order_id ?? "-", $0.error_code ?? "-"]
            }
            if let stop { throw stop }
            let placed = results.filter { $0.outcome == .placed }.compactMap(\.order_id)
            if let timeout, watch {
                // Another raxx-order may place and settle while this one watches.
                lock.release()
                if placed.isEmpty {
                    _ = try? await deadMan.disarm()
                } else {
                    try await followOrders(placed, timeout: timeout, api: api, accountID: session.accountID, context: context)
                }
            } else if let firesAt = armed?.firesAt {
                context.say("raxx-order: The dead man's switch is armed: the server cancels the open orders at \(RFC3339.string(from: firesAt)) "
                            + "unless it is renewed (raxx-order heartbeat) or disarmed (raxx-order disarm).")
            }
            let refused = results.filter { $0.outcome != .placed }.count
            if refused > 0 {
                throw RaxxError.failure(code: "rejected", "\(refused) of \(results.count) order\(results.count == 1 ? " was" : "s were") not placed.")
            }
        }

        func checkSymbols(_ intents: [OrderIntent], api: any APIProtocol) async throws {
            let symbols = Array(Set(intents.map(\.symbol))).sorted()
            let unknown = Set(try await api.getInstruments(query: .init(symbol: symbols)).checked().ok.body.json.unknown.map { $0.uppercased() })
            if let first = intents.first(where: { unknown.contains($0.symbol) }) {
                throw RaxxError.badInput(line: first.line, field: "symbol", "'\(first.symbol)' is not on the market (unknown or expired); no order was sent")
            }
        }
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}

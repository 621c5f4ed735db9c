import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxHTTP
import RaxxSession
import RaxxStore
import RaxxSync

/// Sends orders and settles their fate: journal first, then the wire; a step-up when the server
/// asks for one; on a lost connection, the batch stops (nothing is queued) and what was in flight
/// is looked up by `reconcile` on the next run.
struct OrderDesk {
    let context: CommandContext
    let client: Client
    let journal: OrderJournal
    let pin: Ceremonies.PINPrompt
    let deadline: RaxxDuration

    struct Result: Encodable {
        var line: Int
        var client_order_id: String
        var symbol: String
        var side: String
        var qty: Int64
        var result: String           // placed, rejected, cancelled, expired, unknown, not_sent
        var order_id: String?
        var status: String?
        var error_code: String?
        var message: String?
    }

    /// The journal's lock: held by place and reconcile for their whole run.
    static func lock(_ context: CommandContext) async throws -> RefreshLock {
        try await RefreshLock(directory: context.configuration.stateDirectory, name: "orders.lock", wait: .seconds(60),
                              busy: "Another raxx-order is placing or reconciling orders.")
    }

    static func journalPath(_ context: CommandContext) -> URL {
        context.configuration.stateDirectory.appendingPathComponent("orders.sqlite")
    }

    func request(_ intent: OrderIntent) -> Components.Schemas.OrderRequest {
        .init(clientOrderId: intent.clientOrderID, symbol: intent.symbol, side: .init(rawValue: intent.side) ?? .buy, qty: intent.qty,
              _type: .init(rawValue: intent.type) ?? .market, limitPrice: intent.limitPrice, tif: .init(rawValue: intent.tif) ?? .day,
              notAfter: context.clock().addingTimeInterval(deadline.seconds), mode: .paper)
    }

    static func action(_ intent: OrderIntent) -> OrderAction {
        OrderAction(clientOrderID: intent.clientOrderID, symbol: intent.symbol, side: intent.side, qty: intent.qty, type: intent.type,
                    limitPrice: intent.limitPrice, tif: intent.tif, mode: "paper")
    }

    private func send(_ intent: OrderIntent, grant: String? = nil) async throws -> Operations.PlaceOrder.Output {
        let body = request(intent)
        try journal.recordSending(clientOrderID: intent.clientOrderID, request: (try? JSONLines.line(body)) ?? "", at: context.clock())
        return try await client.placeOrder(headers: .init(raxxStepUpGrant: grant), body: .json(body))
    }

    /// Places the batch in order; answers one result per intent and the exit status it calls for.
    func place(_ intents: [OrderIntent], ceremonies: Ceremonies) async -> ([Result], RaxxError?) {
        var results: [Result] = []
        var stop: RaxxError? = nil
        for intent in intents {
            var result = Result(line: intent.line, client_order_id: intent.clientOrderID, symbol: intent.symbol, side: intent.side,
                                qty: intent.qty, result: "not_sent")
            if stop != nil {
                result.message = "Not sent: the batch stopped at an earlier order. Nothing is queued."
                results.append(result)
                continue
            }
            do {
                var output = try await send(intent)
                if case .default(_, let answer) = output, let problem = try? answer.body.applicationProblemJson, problem.code == "step_up_required" {
                    let expected = Self.action(intent).hash
                    guard problem.actionHash == expected else {
                        throw RaxxError.notPermitted(code: "step_up_mismatch", "The server asked to confirm a different order than this one.")
                    }
                    if context.format == .text || context.io.stderrIsTTY {
                        context.say("Order on line \(intent.line) (\(intent.side) \(intent.qty) \(intent.symbol)) is large: confirm it with your passkey.")
                    }
                    let grant = try await ceremonies.stepUp(actionHash: expected, pin: pin)
                    output = try await send(intent, grant: grant.grant)
                }
                switch output {
                case .created(let created): settle(&result, order: try created.body.json)
                case .ok(let existing): settle(&result, order: try existing.body.json)
                case .default(_, let answer):
                    let problem = try answer.body.applicationProblemJson
                    result.result = "rejected"
                    result.error_code = problem.code
                    result.message = problem.detail ?? problem.title
                    let error = ErrorMapping.raxxError(problem: problem)
                    if error.status == .signInRequired || error.status == .notPermitted && problem.code != "live_trading_refused" {
                        stop = error
                    }
                    if problem.code == "live_trading_refused" { stop = RaxxError.notPermitted(code: problem.code, RaxxOrder.Place.liveRefusal) }
                }
            } catch {
                let e = ErrorMapping.raxxError(from: error)
                let refusedBeforePlacing = e.status == .notPermitted || e.status == .signInRequired
                if !refusedBeforePlacing {
                    // Was it delivered? A refused connection, a bad URL or an unverifiable server never
                    // carried it; a timeout, a reset or an unreadable answer may have.
                    let kind = ErrorMapping.transportFailure(in: error)?.kind
                    let delivered = !(kind == .offlineHard || kind == .policy || kind == .tls)
                    result.result = delivered ? "unknown" : "not_sent"
                    result.error_code = e.code
                    result.message = delivered ? "The connection was lost after sending; the order will be looked up (raxx-order reconcile)."
                                               : "Not sent: " + e.message
                    stop = delivered ? RaxxError(code: "order_unknown", message: "The connection was lost while an order was in flight; its outcome is unknown.",
                                                 hint: "Run raxx-order reconcile when online: it looks the order up and cancels it if it is still pending.",
                                                 status: .unavailable) : e
                } else {
                    result.result = "rejected"
                    result.error_code = e.code
                    result.message = e.message
                    stop = e
                }
            }
            record(result)
            results.append(result)
        }
        return (results, stop)
    }

    private func settle(_ result: inout Result, order: Components.Schemas.Order) {
        result.order_id = order.id
        result.status = order.status.rawValue
        switch order.status {
        case .rejected:
            result.result = "rejected"
            result.error_code = order.rejectCode
            result.message = order.rejectCode.map { "Rejected: \($0.replacingOccurrences(of: "_", with: " "))." }
        case .cancelled, .expired:
            // The same client_order_id again, answered with an order that is over (cancelled after a
            // lost connection, say): nothing was placed now.
            result.result = order.status.rawValue
            result.error_code = order.rejectCode
            result.message = "This client_order_id's order is \(order.status.rawValue); use a new client_order_id to place it again."
        default:
            result.result = "placed"
        }
    }

    private func record(_ r: Result) {
        let state: OrderJournal.State = switch r.result {
        case "placed": .placed
        case "rejected": .rejected
        case "cancelled", "expired": .cancelled
        case "unknown": .unknown
        default: .notPlaced
        }
        try? journal.record(r.client_order_id, state, orderID: r.order_id, status: r.status, errorCode: r.error_code,
                            message: r.message, at: context.clock())
    }

    // MARK: Reconcile

    struct Settled: Encodable {
        var client_order_id: String
        var outcome: String      // cancelled, filled, placed, rejected, not_placed
        var order_id: String?
        var status: String?
        var message: String
    }

    /// Looks up every order whose reply was lost: one still pending is cancelled (a late order can
    /// do harm), a filled one is reported, an absent one is marked not placed.
    func reconcile() async throws -> [Settled] {
        var settled: [Settled] = []
        for entry in try journal.unresolved() {
            let found: Components.Schemas.Order?
            switch try await client.listOrders(query: .init(clientOrderId: entry.clientOrderID, limit: 1)) {
            case .ok(let ok): found = try ok.body.json.orders.first
            case .default(_, let problem): throw try problem.raxxError
            }
            let now = context.clock()
            guard var order = found else {
                // Still within its deadline it may yet arrive: look again later rather than declare it lost.
                if let notAfter = Self.notAfter(entry.request), notAfter > now {
                    settled.append(.init(client_order_id: entry.clientOrderID, outcome: "in_flight",
                                         message: "Not at the server yet; it may still arrive until \(RFC3339.string(from: notAfter))."))
                    continue
                }
                try journal.record(entry.clientOrderID, .notPlaced, message: "The server never received it.", at: now)
                settled.append(.init(client_order_id: entry.clientOrderID, outcome: "not_placed", message: "The server never received it."))
                continue
            }
            if [.open, .partiallyFilled, .pending].contains(order.status) {
                switch try await client.cancelOrder(path: .init(orderId: order.id)) {
                case .ok(let ok): order = try ok.body.json
                case .default(_, let problem): throw try problem.raxxError
                }
                let message = "It was still pending when the connection was lost, so it has been cancelled"
                    + (order.filledQty > 0 ? " (\(order.filledQty) of \(order.qty) had filled)." : ".")
                try journal.record(entry.clientOrderID, .cancelled, orderID: order.id, status: order.status.rawValue, message: message, at: now)
                settled.append(.init(client_order_id: entry.clientOrderID, outcome: "cancelled", order_id: order.id, status: order.status.rawValue, message: message))
            } else {
                let outcome = order.status == .rejected ? "rejected" : order.status == .filled ? "filled" : order.status.rawValue
                let message = "It reached the server: \(order.status.rawValue)" + (order.avgFillPrice.map { " at \($0)" } ?? "") + "."
                try journal.record(entry.clientOrderID, order.status == .rejected ? .rejected : .placed, orderID: order.id,
                                   status: order.status.rawValue, errorCode: order.rejectCode, message: message, at: now)
                settled.append(.init(client_order_id: entry.clientOrderID, outcome: outcome, order_id: order.id, status: order.status.rawValue, message: message))
            }
        }
        return settled
    }

    /// The deadline of a journalled request.
    static func notAfter(_ request: String) -> Date? {
        struct Deadline: Decodable { var not_after: String }
        return (try? JSONDecoder().decode(Deadline.self, from: Data(request.utf8))).flatMap { RFC3339.date(from: $0.not_after) }
    }

    /// Before orders go out: reconcile what an earlier run left unknown (telling the user), and
    /// bring the cache up to date if it is older than `window` or its last refresh failed offline.
    func prepare(freshness window: RaxxDuration) async throws {
        for s in try await reconcile() {
            context.say("raxx-order: order \(s.client_order_id): \(s.message)")
        }
        let store = try CacheStore.open(at: context.configuration.cacheFile)
        let state = try store.syncState()
        let age = state.lastSuccessAt.map { context.clock().timeIntervalSince($0) } ?? .infinity
        guard age > window.seconds || state.lastRefreshFailedOffline || state.rebuilding != .none else { return }
        guard let session = try context.keystore.load().session else { throw RaxxError.signInRequired }
        let lock = try await RefreshLock(directory: context.configuration.cacheDirectory, wait: .seconds(30))
        defer { withExtendedLifetime(lock) {} }
        _ = try await CacheRefresher(store: store, client: client, accountID: session.accountID,
                                     retention: context.configuration.cacheRetention, clock: context.clock).refresh()
    }
}

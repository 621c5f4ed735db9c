import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxStore
import RaxxWire

/// Sends orders and settles their fate: journal first, then the wire; a step-up when the server
/// asks for one; on a lost connection, the batch stops (nothing is queued) and what was in flight
/// is looked up by `reconcile` on the next run.
public struct OrderDesk: Sendable {
    /// The API, signed in.
    public let client: any APIProtocol
    public let journal: OrderJournal
    /// The account the orders are placed for: the journal settles only this account's orders.
    public let accountID: String
    /// The local clock (journal times, the cache's age).
    public let clock: @Sendable () -> Date
    /// The server's clock: order deadlines are the server's to judge, so they are computed, and
    /// looked back on by reconcile, in its time.
    public let serverClock: @Sendable () -> Date
    /// How long the server may take to receive an order before it refuses it.
    public let deadline: RaxxDuration
    /// The same API for orders sent as bytes (see `send`), when the world has one.
    public var rawOrders: RawRaptor? = nil

    public init(
        client: any APIProtocol, journal: OrderJournal, accountID: String, clock: @escaping @Sendable () -> Date,
        serverClock: (@Sendable () -> Date)? = nil, deadline: RaxxDuration
    ) {
        self.serverClock = serverClock ?? clock
        self.client = client
        self.journal = journal
        self.accountID = accountID
        self.clock = clock
        self.deadline = deadline
    }

    /// Confirms an order the server asked to step up (with the passkey): answers the grant.
    public typealias StepUp = @Sendable (_ intent: OrderIntent, _ actionHash: String) async throws -> String

    /// An order's request, encoded once: the bytes journalled are the bytes sent.
    struct Prepared: Sendable {
        let intent: OrderIntent
        let notAfter: Date
        let json: [UInt8]
    }

    func prepare(_ intent: OrderIntent) -> Prepared {
        let notAfter = serverClock().addingTimeInterval(deadline.seconds)
        return Prepared(intent: intent, notAfter: notAfter, json: intent.requestJSON(notAfter: notAfter))
    }

    /// Journals the order, and with it (one transaction, first) the outcomes in `settling`.
    /// A failed write throws `journal_unwritable`: the order must not be sent.
    func journalSending(_ order: Prepared, settling: [OrderJournal.Outcome]) throws {
        do {
            try journal.recordSending(
                clientOrderID: order.intent.clientOrderID, accountID: accountID,
                request: String(decoding: order.json, as: UTF8.self), at: clock(), settling: settling)
        } catch {
            throw Self.journalFailure(error)
        }
    }

    /// Sends an order whose entry is written (`journalSending`). Through `rawOrders` the journalled
    /// bytes go on the wire and the answer is read straight from its bytes; a step-up's retry, with
    /// its grant, goes through the generated client.
    private func send(_ order: Prepared, grant: String? = nil) async throws -> Operations.PlaceOrder.Output {
        guard grant == nil, let rawOrders else {
            return try await client.placeOrder(headers: .init(raxxStepUpGrant: grant), body: .json(order.intent.request(notAfter: order.notAfter)))
        }
        let (status, answer) = try await rawOrders.post(WireOperations.placeOrder, json: order.json)
        switch status.code {
        case 201: return .created(.init(body: .json(try OrderAnswerReader.order(answer))))
        case 200: return .ok(.init(body: .json(try OrderAnswerReader.order(answer))))
        default:
            let problem = try JSONDecoder().decode(Components.Schemas.Problem.self, from: Data(answer))
            return .default(statusCode: status.code, .init(body: .applicationProblemJson(problem)))
        }
    }

    /// The server's dry run of the batch (`checkOrders`, up to 1,000 orders a request): each
    /// order's verdict, in the intents' order, each judged against what the ones before it leave.
    /// Nothing is placed or journalled.
    public func check(_ intents: [OrderIntent]) async throws -> [Components.Schemas.OrderCheck] {
        // An order's deadline is judged when it is placed, each with its own: the check's deadline
        // is only the check's, given time enough to arrive.
        let notAfter = serverClock().addingTimeInterval(max(deadline.seconds, Self.checkDeadline))
        var checks: [Components.Schemas.OrderCheck] = []
        checks.reserveCapacity(intents.count)
        for start in stride(from: 0, to: intents.count, by: Self.checkBatch) {
            let chunk = intents[start..<min(start + Self.checkBatch, intents.count)]
            let answer = try await client.checkOrders(body: .json(.init(orders: chunk.map { $0.request(notAfter: notAfter) })))
            let got = try answer.checked().ok.body.json.checks
            guard got.count == chunk.count, zip(got, chunk).allSatisfy({ $0.clientOrderId == $1.clientOrderID }) else {
                throw RaxxError(code: .badResponse, message: "The server's check did not answer for each order of the batch.")
            }
            checks += got
        }
        return checks
    }

    /// The least time a check's orders have to arrive, in seconds.
    static let checkDeadline: TimeInterval = 30

    /// The most orders one `checkOrders` request takes (the spec's maxItems).
    public static let checkBatch = 1000

    /// Places the batch in order; answers one result per intent and the error the run ends with.
    /// `progress` hears how many intents have been settled so far.
    ///
    /// The journal holds every order before it is sent. The next order's entry is written while
    /// the order before it is at the server (`JournalAhead`, on a thread of its own), and with it,
    /// in the same transaction, the outcomes answered so far: one commit per order, none of them
    /// between an answer and the next order going out. The last outcomes are written when no order
    /// follows (the last one, or the batch stopped); an entry written ahead for an order the batch
    /// then stops before is settled as never sent. A process that dies before an outcome is
    /// written leaves its order `sending`, which the next run's `reconcile` looks up at the
    /// server — as it would had it died before a write of its own.
    public func place(
        _ intents: [OrderIntent], progress: @Sendable (Int) -> Void = { _ in },
        stepUp: StepUp
    ) async -> ([PlacementResult], RaxxError?) {
        // One order at a time, on a thread of its own: each request is performed there, in place.
        await InPlaceRequests.run { await placeInOrder(intents, progress: progress, stepUp: stepUp) }
    }

    private func placeInOrder(
        _ intents: [OrderIntent], progress: @Sendable (Int) -> Void,
        stepUp: StepUp
    ) async -> ([PlacementResult], RaxxError?) {
        var results: [PlacementResult] = []
        var stop: RaxxError? = nil
        // Outcomes known but not yet written: they go with a later order's entry.
        var unwritten: [OrderJournal.Outcome] = []
        // The next order, encoded, and the write of its entry, under way since the order before it
        // was sent.
        var ahead: (order: Prepared, write: JournalAhead)? = nil
        for (index, intent) in intents.enumerated() {
            var result = PlacementResult(intent)
            if stop != nil {
                result.message = "Not sent: the batch stopped at an earlier order. Nothing is queued."
                results.append(result)
                continue
            }
            do {
                let order: Prepared
                if let written = ahead {
                    ahead = nil
                    order = written.order
                    try await written.write.wait()
                } else {
                    order = prepare(intent)
                    try journalSending(order, settling: unwritten)
                    unwritten = []
                }
                if index + 1 < intents.count {
                    let next = prepare(intents[index + 1])
                    let settling = unwritten
                    unwritten = []
                    ahead = (next, JournalAhead { [self] in try journalSending(next, settling: settling) })
                }
                var output = try await send(order)
                if case .default(_, let answer) = output, let problem = try? answer.body.applicationProblemJson,
                    problem.code == Components.Schemas.ProblemCode.stepUpRequired.rawValue
                {
                    let expected = intent.action.hash
                    guard problem.actionHash == expected else {
                        throw RaxxError(code: .stepUpMismatch, message: "The server asked to confirm a different order than this one.")
                    }
                    let grant: String
                    do {
                        grant = try await stepUp(intent, expected)
                    } catch {
                        // The server answered (asking for the confirmation) and placed nothing; the
                        // confirmation could not be given here: no PIN source, a refusal, a wrong PIN.
                        throw StepUpNotGiven(error: ErrorMapping.raxxError(from: error))
                    }
                    let retry = prepare(intent)
                    try journalSending(retry, settling: [])
                    output = try await send(retry, grant: grant)
                }
                switch output {
                case .created(let created): result.settle(with: try created.body.json)
                case .ok(let existing): result.settle(with: try existing.body.json)
                case .default(_, let answer):
                    let problem = try answer.body.applicationProblemJson
                    result.outcome = .rejected
                    result.error_code = problem.code
                    result.message = problem.detail ?? problem.title
                    let error = ErrorMapping.raxxError(problem: problem)
                    if problem.code == Components.Schemas.ProblemCode.liveTradingRefused.rawValue {
                        stop = RaxxError(code: .liveTradingRefused, message: Self.liveRefusal)
                    } else if error.status == .signInRequired || error.status == .notPermitted {
                        stop = error
                    }
                }
            } catch let notGiven as StepUpNotGiven {
                let e = notGiven.error
                result.outcome = .rejected
                result.error_code = e.code
                result.message = e.status == .usage ? "Not placed: the server asks to confirm this order with your PIN. " + e.message : e.message
                stop = e
            } catch {
                let e = ErrorMapping.raxxError(from: error)
                if e.is(.journalUnwritable) {
                    // The entry could not be written, so the order was not sent: send no more.
                    result.outcome = .notSent
                    result.error_code = e.code
                    result.message = "Not sent: " + e.message
                    stop = e
                } else if e.status == .notPermitted || e.status == .signInRequired {
                    result.outcome = .rejected
                    result.error_code = e.code
                    result.message = e.message
                    stop = e
                } else {
                    // Was it delivered? A refused connection, a bad URL or an unverifiable server never
                    // carried it; a timeout, a reset or an unreadable answer may have.
                    let kind = ErrorMapping.transportFailure(in: error)?.kind
                    let delivered = !(kind == .offlineHard || kind == .policy || kind == .tls)
                    result.outcome = delivered ? .unknown : .notSent
                    result.error_code = e.code
                    result.message =
                        delivered
                        ? "The connection was lost after sending; the order will be looked up (raxx-order reconcile)."
                        : "Not sent: " + e.message
                    stop =
                        delivered
                        ? RaxxError(
                            code: .orderUnknown, message: "The connection was lost while an order was in flight; its outcome is unknown.",
                            hint: "Run raxx-order reconcile when online: it looks the order up and cancels it if it is still pending.") : e
                }
            }
            unwritten.append(
                OrderJournal.Outcome(
                    result.client_order_id, result.outcome.journalState, orderID: result.order_id,
                    status: result.status?.rawValue, errorCode: result.error_code, message: result.message,
                    at: clock()))
            if stop != nil, let written = ahead {
                // The next order's entry was written ahead, and the batch stops before it: it was
                // never sent.
                ahead = nil
                if (try? await written.write.wait()) != nil {
                    unwritten.append(
                        OrderJournal.Outcome(
                            written.order.intent.clientOrderID, .notPlaced,
                            message: "Not sent: the batch stopped at an earlier order.", at: clock()))
                }
            }
            if stop != nil || index == intents.count - 1 {
                // No order follows to carry it: written now.
                do {
                    try journal.record(unwritten)
                    unwritten = []
                } catch {
                    // What happened to this order is known now but could not be kept: send no more.
                    stop = stop ?? Self.journalFailure(error)
                }
            }
            results.append(result)
            progress(results.count)
        }
        return (results, stop)
    }

    /// A step-up the server asked for and this process could not give: nothing was placed.
    struct StepUpNotGiven: Error {
        let error: RaxxError
    }

    public static let liveRefusal = "Live trading is not available from the command line; orders are paper only."

    static func journalFailure(_ error: any Error) -> RaxxError {
        RaxxError(
            code: .journalUnwritable, message: "The order journal could not be written: \(error).",
            hint: "Nothing more was sent. Check the state folder's free space and permissions, then run raxx-order reconcile.")
    }

    // MARK: Reconcile

    /// Looks up every order whose reply was lost: one still pending is cancelled (a late order can
    /// do harm), a filled one is reported, an absent one is marked not placed.
    /// `moment` writes a time as a person reads it (`CommandContext.peopleMoment`).
    public func reconcile(moment: @Sendable (Date) -> String) async throws -> [Settled] {
        var settled: [Settled] = []
        for entry in try journal.unresolved(accountID: accountID) {
            let found = try await client.listOrders(query: .init(clientOrderId: entry.clientOrderID, limit: 1)).checked().ok.body.json.orders.first
            let now = clock()
            guard var order = found else {
                // Still within its deadline (by the server's clock, which judges it) it may yet
                // arrive: look again later rather than declare it lost.
                if let notAfter = Self.notAfter(entry.request), notAfter > serverClock() {
                    settled.append(
                        .init(
                            client_order_id: entry.clientOrderID, outcome: .inFlight,
                            message: "Not at the server yet; it may still arrive until \(moment(notAfter))."))
                    continue
                }
                try journal.record(entry.clientOrderID, .notPlaced, message: "The server never received it.", at: now)
                settled.append(.init(client_order_id: entry.clientOrderID, outcome: .notPlaced, message: "The server never received it."))
                continue
            }
            if !order.status.isFinal {
                order = try await client.cancelOrder(path: .init(orderId: order.id)).checked().ok.body.json
                let message =
                    "It was still pending when the connection was lost, so it has been cancelled"
                    + (order.filledQty > 0 ? " (\(order.filledQty) of \(order.qty) had filled)." : ".")
                try journal.record(entry.clientOrderID, .cancelled, orderID: order.id, status: order.status.rawValue, message: message, at: now)
                settled.append(
                    .init(
                        client_order_id: entry.clientOrderID, outcome: .cancelled, order_id: order.id, status: order.status,
                        message: message))
            } else {
                let message = "It reached the server: \(order.status.rawValue)" + (order.avgFillPrice.map { " at \($0)" } ?? "") + "."
                try journal.record(
                    entry.clientOrderID, order.status == .rejected ? .rejected : .placed, orderID: order.id,
                    status: order.status.rawValue, errorCode: order.rejectCode, message: message, at: now)
                settled.append(
                    .init(
                        client_order_id: entry.clientOrderID, outcome: .reached(order.status), order_id: order.id,
                        status: order.status, message: message))
            }
        }
        return settled
    }

    /// The deadline of a journalled request.
    static func notAfter(_ request: String) -> Date? {
        struct Deadline: Decodable { var not_after: String }
        return (try? JSONDecoder().decode(Deadline.self, from: Data(request.utf8))).flatMap { RFC3339.date(from: $0.not_after) }
    }

    // MARK: Before orders go out

    /// Brings the cache up to date before orders go out, when it is older than `window`, its last
    /// refresh failed offline, or a rebuild was left unfinished.
    public func refreshIfStale(
        _ stores: any LocalStores, accountID: String, freshness window: RaxxDuration,
        retention: RaxxDuration, rawPages: RawRaptor? = nil
    ) async throws {
        let store = try stores.cache()
        let state = try store.syncState()
        let age = state.lastSuccessAt.map { clock().timeIntervalSince($0) } ?? .infinity
        guard age > window.seconds || state.lastRefreshFailedOffline || state.rebuilding != .none else { return }
        let lock = try await stores.lock(.refresh, wait: .seconds(30))
        defer { lock.release() }
        var refresher = CacheRefresher(store: store, client: client, accountID: accountID, retention: retention, clock: clock)
        refresher.rawPages = rawPages
        _ = try await refresher.refresh()
    }
}

/// What became of one order of a batch (one JSON line of `raxx-order place`).
public struct PlacementResult: Encodable, Sendable, Equatable {
    public enum Outcome: String, Encodable, Sendable {
        case placed, rejected, cancelled, expired, unknown
        case notSent = "not_sent"

        var journalState: OrderJournal.State {
            switch self {
            case .placed: .placed
            case .rejected: .rejected
            case .cancelled, .expired: .cancelled
            case .unknown: .unknown
            case .notSent: .notPlaced
            }
        }
    }

    public var line: Int
    public var client_order_id: String
    public var symbol: String
    public var side: OrderSide
    public var qty: Int64
    public var outcome: Outcome
    public var order_id: String?
    public var status: OrderStatus?
    /// The average price of what has filled so far; nil while nothing has.
    public var avg_fill_price: String?
    public var error_code: String?
    public var message: String?

    init(_ intent: OrderIntent) {
        line = intent.line
        client_order_id = intent.clientOrderID
        symbol = intent.symbol
        side = intent.side
        qty = intent.qty
        outcome = .notSent
    }

    enum CodingKeys: String, CodingKey {
        case line, client_order_id, symbol, side, qty, outcome = "result", order_id, status, avg_fill_price, error_code, message
    }

    /// An order not sent because the server's dry run said it would be rejected.
    public static func notSent(_ intent: OrderIntent, code: String?, message: String) -> PlacementResult {
        var result = PlacementResult(intent)
        result.error_code = code
        result.message = message
        return result
    }

    mutating func settle(with order: Components.Schemas.Order) {
        order_id = order.id
        status = order.status
        avg_fill_price = order.filledQty > 0 ? order.avgFillPrice : nil
        switch order.status {
        case .rejected:
            outcome = .rejected
            error_code = order.rejectCode
            message = order.rejectCode.map { "Rejected: \($0.replacingOccurrences(of: "_", with: " "))." }
        case .cancelled, .expired:
            // The same client_order_id again, answered with an order that is over (cancelled after a
            // lost connection, say): nothing was placed now.
            outcome = order.status == .cancelled ? .cancelled : .expired
            error_code = order.rejectCode
            message = "This client_order_id's order is \(order.status.rawValue); use a new client_order_id to place it again."
        case .pending, .open, .partiallyFilled, .filled:
            outcome = .placed
        }
    }
}

/// What `reconcile` found of one order whose reply was lost.
public struct Settled: Encodable, Sendable, Equatable {
    public enum Outcome: Sendable, Equatable, Encodable {
        /// Still pending at the server: cancelled now.
        case cancelled
        /// Final at the server already (filled, rejected, …).
        case reached(OrderStatus)
        /// Never reached the server, and its deadline passed.
        case notPlaced
        /// Not at the server yet, but still within its deadline.
        case inFlight

        public var name: String {
            switch self {
            case .cancelled: OrderStatus.cancelled.rawValue
            case .reached(let status): status.rawValue
            case .notPlaced: "not_placed"
            case .inFlight: "in_flight"
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(name)
        }
    }

    public var client_order_id: String
    public var outcome: Outcome
    public var order_id: String?
    public var status: OrderStatus?
    public var message: String
}

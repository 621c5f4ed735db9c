import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxWire

/// `raxx-order watch` (and `place --watch`): follows orders until each is final, keeping the
/// session's dead man's switch armed meanwhile by renewing it every third of its timeout.
///
/// When the connection drops it says at once when the server will cancel the orders unless the
/// connection returns, and keeps trying with capped, jittered backoff (`Backoff`). On recovery it
/// reads the orders again before anything else; if the switch fired it tells each order's fate and
/// ends with `switchFired`; otherwise it renews the switch and goes on. When every order is final
/// it disarms the switch (so no later order of the session falls under it by surprise).
public struct OrderWatcher: Sendable {
    public let api: any APIProtocol
    public let cancelAfter: CancelAfterSwitch
    /// The switch's timeout, in seconds (5 to 600).
    public let timeout: Int
    /// Monotonic time: when renewals are due.
    public let monotonic: @Sendable () -> Duration
    public let sleep: @Sendable (Duration) async throws -> Void
    /// Says something to a person (stderr).
    public let say: @Sendable (String) -> Void
    /// Writes a time as a person reads it in those sentences (`CommandContext.peopleMoment`).
    public let moment: @Sendable (Date) -> String
    /// How often the orders are read while nothing else is due.
    public let poll: Duration
    /// Hears when the switch is armed or renewed, with the instant it would fire (a live table
    /// shows it).
    public var armed: @Sendable (Date?) -> Void = { _ in }

    public init(
        api: any APIProtocol, cancelAfter: CancelAfterSwitch, timeout: Int, monotonic: @escaping @Sendable () -> Duration,
        sleep: @escaping @Sendable (Duration) async throws -> Void, say: @escaping @Sendable (String) -> Void,
        moment: @escaping @Sendable (Date) -> String, poll: Duration = .seconds(1)
    ) {
        self.api = api
        self.cancelAfter = cancelAfter
        self.timeout = timeout
        self.monotonic = monotonic
        self.sleep = sleep
        self.say = say
        self.moment = moment
        self.poll = poll
    }

    /// How a watch ended.
    public enum Outcome: Sendable, Equatable {
        /// Every order is final; none was cancelled by the switch.
        case allFinal
        /// The switch fired while the connection was gone: these orders were cancelled by it.
        case switchFired([Components.Schemas.Order])
        /// The person interrupted the watch (the switch is still armed: the caller disarms it, or
        /// says until when it stays armed).
        case interrupted(firesAt: Date?)
    }

    /// What the caller shows: the orders that changed (in the order watched), and all of them.
    public typealias Changed = (_ changed: [Components.Schemas.Order], _ all: [Components.Schemas.Order]) throws -> Void

    /// The renewal period: a third of the timeout.
    public var renewal: Duration { .milliseconds(Int64(timeout) * 1000 / 3) }

    /// Watches `orderIDs` until each is final, the switch fires, or the task is cancelled (the
    /// person interrupted). Throws what is not a lost connection (sign-in over, an unknown order, …).
    public func watch(_ orderIDs: [String], changed: Changed) async throws -> Outcome {
        var firesAt: Date? = nil
        do {
            return try await follow(orderIDs, firesAt: &firesAt, changed: changed)
        } catch  where Task.isCancelled || error is CancellationError || ErrorMapping.raxxError(from: error).status == .cancelled {
            return .interrupted(firesAt: firesAt)
        }
    }

    private func follow(_ orderIDs: [String], firesAt known: inout Date?, changed: Changed) async throws -> Outcome {
        func stopped() -> Bool { Task.isCancelled }
        var state = try await cancelAfter.arm(timeout: timeout, orderIDs: orderIDs)
        known = state.firesAt
        armed(state.firesAt)
        var lastRenewal = monotonic()
        var orders: [String: Components.Schemas.Order] = [:]
        var seen: [String: Components.Schemas.Order] = [:]
        func report(_ fetched: [Components.Schemas.Order]) throws {
            let changes = fetched.filter { order in
                guard let before = seen[order.id] else { return true }
                return before.status != order.status || before.filledQty != order.filledQty
            }
            for order in fetched {
                orders[order.id] = order
                seen[order.id] = order
            }
            if !changes.isEmpty { try changed(changes, orderIDs.compactMap { orders[$0] }) }
        }
        try report(try await read(orderIDs))
        var backoff = Backoff()
        while true {
            let open = orderIDs.filter { !(orders[$0]?.status.isFinal ?? false) }
            if open.isEmpty {
                _ = try? await cancelAfter.disarm()
                return .allFinal
            }
            if stopped() { return .interrupted(firesAt: state.firesAt) }
            let untilRenewal = renewal - (monotonic() - lastRenewal)
            try? await sleep(max(.milliseconds(50), min(poll, untilRenewal)))
            if stopped() { return .interrupted(firesAt: state.firesAt) }
            do {
                if monotonic() - lastRenewal >= renewal {
                    state = try await cancelAfter.arm(timeout: timeout)
                    known = state.firesAt
                    armed(state.firesAt)
                    lastRenewal = monotonic()
                }
                try report(try await read(open))
                backoff.reset()
            } catch  where ErrorMapping.isOffline(error) {
                let firesAt = state.firesAt
                say(
                    "No connection — the server will cancel the watched orders at "
                        + (firesAt.map(moment) ?? "the switch's deadline") + " unless the connection returns. Still trying.")
                // Back: the orders are read first, then their fate is told.
                var fetched: [Components.Schemas.Order] = []
                while true {
                    do { try await sleep(backoff.next()) } catch { return .interrupted(firesAt: firesAt) }
                    if stopped() { return .interrupted(firesAt: firesAt) }
                    do {
                        fetched = try await read(orderIDs)
                        break
                    } catch  where ErrorMapping.isOffline(error) {
                        continue
                    }
                }
                backoff.reset()
                try report(fetched)
                let fired = fetched.filter { CancelAfter.cancelledBySwitch(status: $0.status, rejectCode: $0.rejectCode) != nil }
                say("Connection back.")
                for order in fetched { say(Self.fate(order, moment: moment)) }
                if !fired.isEmpty { return .switchFired(fired) }
                state = try await cancelAfter.arm(timeout: timeout)
                known = state.firesAt
                armed(state.firesAt)
                lastRenewal = monotonic()
            }
        }
    }

    /// The orders as the server has them now, in the order given.
    func read(_ ids: [String]) async throws -> [Components.Schemas.Order] {
        var fetched: [Components.Schemas.Order] = []
        for id in ids {
            fetched.append(try await api.getOrder(path: .init(orderId: id)).checked().ok.body.json)
        }
        return fetched
    }

    /// One line for a person about where an order stands; `moment` writes its time.
    public static func fate(_ order: Components.Schemas.Order, moment: (Date) -> String) -> String {
        let what = "order \(order.id) (\(order.side.rawValue) \(order.qty) \(order.symbol))"
        if let reason = CancelAfter.cancelledBySwitch(status: order.status, rejectCode: order.rejectCode) {
            return "\(what) was cancelled by the server at \(moment(order.updatedAt)): \(reason.why)"
                + (order.filledQty > 0 ? " (\(order.filledQty) had filled)." : ".")
        }
        switch order.status {
        case .filled: return "\(what) filled" + (order.avgFillPrice.map { " at \($0)" } ?? "") + "."
        case .partiallyFilled: return "\(what) is still open: \(order.filledQty) of \(order.qty) filled."
        case .open, .pending: return "\(what) is still open."
        default: return "\(what) is \(order.status.rawValue)" + (order.rejectCode.map { " (\($0))" } ?? "") + "."
        }
    }
}

import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxStore
import RaxxWire

/// The session's dead man's switch at the server (`POST /api/orders/cancel-after`), as raxx-order
/// arms, renews and disarms it. Every answer is noted in the journal, so that the next run can tell
/// the trader, once, which orders the switch cancelled (`SwitchReport`).
public struct CancelAfterSwitch: Sendable {
    /// The API, signed in.
    public let api: any APIProtocol
    public let journal: OrderJournal
    public let accountID: String
    /// The local clock (journal times).
    public let clock: @Sendable () -> Date

    public init(api: any APIProtocol, journal: OrderJournal, accountID: String, clock: @escaping @Sendable () -> Date) {
        self.api = api
        self.journal = journal
        self.accountID = accountID
        self.clock = clock
    }

    /// The default timeout while watching.
    public static let watchDefault = RaxxDuration.seconds(30)
    /// The default timeout of a heartbeat when none was armed from here before.
    public static let heartbeatDefault = RaxxDuration.seconds(60)

    /// A timeout as the server takes it: whole seconds (rounded up), 5 to 600.
    public static func seconds(_ timeout: RaxxDuration) throws(RaxxError) -> Int {
        let seconds = Int((timeout.milliseconds + 999) / 1000)
        guard CancelAfter.timeoutRange.contains(seconds) else {
            throw RaxxError.usage("The dead man's switch takes 5s to 10m, not \(timeout).")
        }
        return seconds
    }

    /// Arms or renews the switch to fire `timeout` seconds from now, with `orderIDs` (open orders
    /// placed earlier) under it too.
    @discardableResult
    public func arm(timeout: Int, orderIDs: [String] = []) async throws -> Components.Schemas.CancelAfter {
        let state = try await api.cancelOrdersAfter(body: .json(.init(timeoutS: timeout, orderIds: orderIDs.isEmpty ? nil : orderIDs)))
            .checked().ok.body.json
        try note(state)
        return state
    }

    /// Disarms the switch: the orders it covered stay as they are.
    @discardableResult
    public func disarm() async throws -> Components.Schemas.CancelAfter {
        let state = try await api.cancelOrdersAfter(body: .json(.init(timeoutS: 0))).checked().ok.body.json
        try note(state)
        return state
    }

    private func note(_ state: Components.Schemas.CancelAfter) throws {
        do {
            try journal.noteSwitch(
                accountID: accountID, timeout: state.armed ? state.timeoutS : nil, firesAt: state.armed ? state.firesAt : nil,
                at: clock())
        } catch {
            throw OrderDesk.journalFailure(error)
        }
    }
}

/// The next raxx-order run after the switch cancelled orders tells the trader which and when,
/// once: from the `order_cancelled` alerts after the last one reported, since the switch was first
/// armed from here. Nothing is asked of the server unless a switch was armed from here.
public struct SwitchReport: Sendable {
    public let api: any APIProtocol
    public let journal: OrderJournal
    public let accountID: String
    public let clock: @Sendable () -> Date

    /// How long after its last deadline a switch is still looked after (the server fires it within
    /// moments; this is generous).
    public static let grace: TimeInterval = 120

    public init(api: any APIProtocol, journal: OrderJournal, accountID: String, clock: @escaping @Sendable () -> Date) {
        self.api = api
        self.journal = journal
        self.accountID = accountID
        self.clock = clock
    }

    /// The cancellations not yet reported (oldest first), handed to `tell` and only then marked
    /// reported. Nothing when no switch was armed from here for this account.
    public func run(tell: ([Components.Schemas.Event]) -> Void) async throws {
        guard let watch = try journal.switchWatch(), watch.accountID == accountID else { return }
        let now = clock()
        var cursor = watch.reportCursor
        var found: [Components.Schemas.Event] = []
        while true {
            let page = try await api.listEvents(
                query: .init(
                    cursor: cursor, limit: 500, _type: [.orderCancelled],
                    since: watch.armedSince.addingTimeInterval(-5))
            )
            .checked().ok.body.json
            found += page.events.filter { $0._type == .orderCancelled }
            cursor = max(cursor, page.cursor)
            guard page.hasMore, !page.events.isEmpty else { break }
        }
        if !found.isEmpty { tell(found) }
        // Disarmed from here, or long past its deadline: nothing more can come of it.
        let done = watch.firesAt.map { now.timeIntervalSince($0) > Self.grace } ?? true
        try journal.noteSwitchReported(cursor: cursor, done: done)
    }

    /// One line for a person about one cancelled order; `moment` writes its time.
    public static func message(_ alert: Components.Schemas.Event, moment: (Date) -> String) -> String {
        let what = [alert.side?.rawValue, alert.qty.map { "\($0)" }, alert.symbol].compactMap { $0 }.joined(separator: " ")
        let why = alert.reason.flatMap(CancelAfter.Reason.init(rawValue:))?.why ?? alert.title
        return "order \(alert.orderId ?? "?")" + (what.isEmpty ? "" : " (\(what))")
            + " was cancelled by the server at \(moment(alert.createdAt)): \(why)."
    }
}

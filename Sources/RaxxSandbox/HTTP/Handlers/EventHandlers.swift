import Foundation
import RaxxAPI

/// The `events` tag: raxx-notify's alerts feed, a resumable cursor over the caller's events with
/// an optional long poll.
///
/// - A page holds the caller's events with `seq` above `cursor` (0 when absent), oldest first, at
///   most `limit` (1 to 1,000; default 100), of the `type`s asked for and created at or after
///   `since`. Its `cursor` is the last `seq` it holds, or the cursor asked with when it holds
///   none; `has_more` says more events matching the same filters follow it.
/// - With `wait` (0 to 60 seconds) and nothing to answer, the request is held until an event for
///   the caller commits (answered at once, if it matches the filters), `wait` seconds pass (an
///   empty page), or the server begins shutting down (an empty page, at once).
struct EventHandlers: Sendable {
    let events: EventStore
    let notifier: EventNotifier
    let clock: @Sendable () -> Date

    /// The longest long poll, in seconds (the spec's maximum of `wait`).
    static let maxWait = 60
    static let defaultLimit = 100
    static let maxLimit = 1000
    /// How close to its end a session is when `session_expiring` is written.
    static let expiringWindow: TimeInterval = 15 * 60

    func listEvents(_ input: Operations.ListEvents.Input, caller: Caller) async throws -> Operations.ListEvents.Output {
        let q = input.query
        let cursor = q.cursor ?? 0
        guard cursor >= 0 else { throw ProblemError(400, code: .cursorInvalid, title: "The cursor must not be negative.") }
        let wait = q.wait ?? 0
        guard (0...Self.maxWait).contains(wait) else {
            throw ProblemError.badRequest("Query parameter 'wait' must be 0 to \(Self.maxWait) (seconds).")
        }
        let limit = min(max(q.limit ?? Self.defaultLimit, 1), Self.maxLimit)
        let query = EventQuery(
            user: caller.userID, after: cursor, limit: limit, types: q._type.map { Self.distinct($0.map(\.rawValue)) },
            since: q.since)
        let deadline = ContinuousClock.now.advanced(by: .seconds(wait))
        var page: EventPage
        while true {
            // The mark comes before the read: an event committed after it wakes the wait below.
            let mark = notifier.mark(caller.userID)
            page = try await events.events(query)
            let left = ContinuousClock.now.duration(to: deadline)
            guard page.events.isEmpty, left > .zero else { break }
            // Woken by an event (which may not match the filters): read again. Otherwise the
            // wait is over (timeout, shutdown, cancellation): answer the empty page.
            guard await notifier.wait(for: caller.userID, after: mark, timeout: left) == .event else { break }
        }
        return .ok(.init(body: .json(.init(events: page.events, cursor: page.events.last?.seq ?? cursor, hasMore: page.hasMore))))
    }

    /// One scan for sessions near their end: writes `session_expiring` once per session ending
    /// within `expiringWindow` of the clock's now. The background scan (a `PeriodicScan`)
    /// calls this every interval; tests call it directly.
    @discardableResult
    func noteExpiringSessions() async throws -> [ExpiringSession] {
        try await events.noteExpiringSessions(now: clock(), window: Self.expiringWindow)
    }

    static func distinct(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}

import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxDomain

/// `raxx-notify watch`: follows the feed from the saved cursor, hands each alert to `emit` (which
/// writes and flushes its line), and only then saves the cursor past it, so a restart never skips
/// or repeats an alert. Offline it says so once and tries again with capped, jittered backoff.
public struct AlertWatcher: Sendable {
    public let feed: AlertFeed
    /// Only these types are emitted (the cursor moves past the others all the same).
    public let types: Set<AlertType>?
    public let sleep: @Sendable (Duration) async throws -> Void
    /// Says something to a person (stderr).
    public let say: @Sendable (String) -> Void

    public init(
        feed: AlertFeed, types: Set<AlertType>?, sleep: @escaping @Sendable (Duration) async throws -> Void,
        say: @escaping @Sendable (String) -> Void
    ) {
        self.feed = feed
        self.types = types
        self.sleep = sleep
        self.say = say
    }

    /// The longest wait between two tries while offline.
    public static let maximumBackoff = Duration.seconds(30)

    /// Emits what is new since the saved cursor and returns when caught up (`--once`): nothing
    /// new, nothing emitted. Answers how many alerts were emitted.
    @discardableResult
    public func once(emit: (Components.Schemas.Event) throws -> Void) async throws -> Int {
        var cursor = try feed.store.state().watchCursor ?? 0
        var emitted = 0
        while true {
            let page = try await feed.page(after: cursor)
            emitted += try deliver(page, from: &cursor, emit: emit)
            guard page.hasMore, !page.events.isEmpty else { return emitted }
        }
    }

    /// Follows the feed until the task is cancelled.
    public func follow(emit: (Components.Schemas.Event) throws -> Void) async throws {
        var cursor = try feed.store.state().watchCursor ?? 0
        var backoff = Backoff(maximum: Self.maximumBackoff)
        var offline = false
        while !Task.isCancelled {
            do {
                let page = try await feed.page(after: cursor, wait: AlertFeed.longPoll)
                if offline {
                    say("Connection back.")
                    offline = false
                }
                backoff.reset()
                _ = try deliver(page, from: &cursor, emit: emit)
            } catch  where Self.isOffline(error) && !Task.isCancelled {
                try? feed.store.recordFailure(at: feed.clock())
                if !offline {
                    say("No connection — waiting")
                    offline = true
                }
                do { try await sleep(backoff.next()) } catch { return }
            } catch  where Task.isCancelled || error is CancellationError || ErrorMapping.raxxError(from: error).status == .cancelled {
                return
            }
        }
    }

    /// Emits the page's alerts in order, saving the cursor after each one's line.
    private func deliver(
        _ page: Components.Schemas.EventPage, from cursor: inout Int64,
        emit: (Components.Schemas.Event) throws -> Void
    ) throws -> Int {
        var emitted = 0
        for alert in page.events where alert.seq > cursor {
            if types?.contains(alert._type) ?? true {
                try emit(alert)
                emitted += 1
            }
            cursor = alert.seq
            try feed.store.saveWatchCursor(cursor)
        }
        if page.cursor > cursor {
            cursor = page.cursor
            try feed.store.saveWatchCursor(cursor)
        }
        return emitted
    }

    /// The error shows the server could not be reached (or answered as an unhealthy one does).
    public static func isOffline(_ error: any Error) -> Bool { ErrorMapping.isOffline(error) }
}

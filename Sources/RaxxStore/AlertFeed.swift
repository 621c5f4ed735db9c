import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxDomain

/// The account's alerts from Raptor's event feed (`GET /api/events`), kept in the alert store as
/// they come: pages after a cursor, oldest first, and long polls that answer as soon as there is
/// something new.
public struct AlertFeed: Sendable {
    /// The API, signed in.
    public let api: any APIProtocol
    public let store: AlertStore
    public let clock: @Sendable () -> Date

    /// Alerts a page asks for.
    public static let pageSize = 500
    /// How long a long poll holds (the spec's maximum is 60 s).
    public static let longPoll = 50
    /// A long poll may take its wait and this much more before the transport gives up on it.
    public static let longPollMargin = RaxxDuration.seconds(20)

    public init(api: any APIProtocol, store: AlertStore, clock: @escaping @Sendable () -> Date) {
        self.api = api
        self.store = store
        self.clock = clock
    }

    /// One page after `cursor` (holding up to `wait` seconds when there is nothing new), kept in
    /// the store before it is answered.
    public func page(after cursor: Int64, since: Date? = nil, wait: Int = 0) async throws -> Components.Schemas.EventPage {
        let query = Operations.ListEvents.Input.Query(cursor: cursor, limit: Self.pageSize, wait: wait, since: since)
        let page = try await RequestTimeout.$total.withValue(wait > 0 ? .seconds(Int64(wait)) + Self.longPollMargin : nil) {
            try await api.listEvents(query: query).checked().ok.body.json
        }
        try store.save(page.events, fetchedAt: clock())
        return page
    }

    /// Everything after what the store already has, page by page.
    public func catchUp() async throws {
        var cursor = try store.latestSeq()
        while true {
            let page = try await page(after: cursor)
            cursor = max(cursor, page.cursor)
            guard page.hasMore, !page.events.isEmpty else { return }
        }
    }
}

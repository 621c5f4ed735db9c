import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxWire

/// The delta refresh: pages from Raptor's sync endpoint applied to the cache one transaction at a
/// time (memory stays flat whatever the size), resets rebuilt out of readers' sight, the portfolio
/// snapshot refreshed, retention applied; a failure is recorded (kind, time, message) and the data
/// left as it was.
public struct CacheRefresher: Sendable {
    public let store: CacheStore
    /// The API, signed in with the session's token.
    public let client: any APIProtocol
    public let accountID: String
    public let clock: @Sendable () -> Date
    /// Changes per page: up to three pages are in memory at once (one written, two fetched ahead).
    public var pageSize = 5000
    /// Pages and the portfolio read as bytes, straight into the store, when the connection offers
    /// it; without it (a test's stub API) they are decoded by the generated client.
    public var rawPages: RawRaptor? = nil
    /// Fills and closed orders older than this are evicted after a refresh.
    public var retention: RaxxDuration
    /// Hears the number of changes applied so far.
    public var progress: @Sendable (Int) -> Void = { _ in }
    /// Hears that the pages are all in and a rebuild's last step begins: the new copy replacing
    /// the old one, its indexes built (seconds, on a large account).
    public var finishing: @Sendable () -> Void = {}
    /// Hears how many changes a sync from the start brings, as its first page says (the server
    /// counts them for that page only): a progress line's total.
    public var expectedTotal: (@Sendable (Int) -> Void)? = nil

    public init(store: CacheStore, client: any APIProtocol, accountID: String, retention: RaxxDuration, clock: @escaping @Sendable () -> Date) {
        self.store = store
        self.client = client
        self.accountID = accountID
        self.retention = retention
        self.clock = clock
    }

    public struct Outcome: Sendable, Codable, Equatable {
        public var changes: Int
        public var full: Bool
        public var reset: Bool
        public var cursor: Int64
        public var evicted: Int
    }

    /// A rebuild left unfinished longer than this starts over: the server may have pruned
    /// tombstones it would have needed.
    public static let stalestResumableRebuild: TimeInterval = 24 * 3600

    /// Runs on the cache's own thread between its awaits (`CacheStore.thread`): a page's
    /// transaction and a rebuild's index build (seconds, on a large account) block it, never one of
    /// the concurrency runtime's threads. The pages are fetched, and the portfolio asked for, by
    /// tasks of their own elsewhere.
    public func refresh(full: Bool = false) async throws -> Outcome {
        try await CacheStore.thread.run { try await refreshOnItsThread(full: full) }
    }

    private func refreshOnItsThread(full: Bool) async throws -> Outcome {
        let started = clock()
        let previousAttempt = try store.syncState().lastAttemptAt
        try store.recordAttempt(at: started)
        do {
            let outcome = try await run(full: full, previousAttempt: previousAttempt)
            try store.recordSuccess(at: clock())
            return outcome
        } catch {
            let e = ErrorMapping.raxxError(from: error)
            let failure = RefreshFailure(error, mapped: e)
            do {
                try store.recordFailure(kind: failure.rawValue, message: e.message, connectivity: failure.connectivity, at: clock())
            } catch {
                // The refresh's own failure is what the person needs to hear; the cache that could
                // not record it says so on the next read (its last attempt stays unexplained).
            }
            throw e
        }
    }

    private func run(full: Bool, previousAttempt: Date?) async throws -> Outcome {
        // Each page's buffer (a megabyte or two) is filled on the transfer's thread and freed on
        // this one. In a process whose threads share one arena (raxx-cache), the next page takes
        // the memory the last one freed. Otherwise each buffer is mapped apart and handed back
        // after each page: freed into another thread's arena, it would wait there unused, adding
        // to the peak.
        let reusesFreedPages = ProcessMemory.sharesOneArena
        if !reusesFreedPages { ProcessMemory.mapLargeBuffersApart() }
        var state = try store.syncState()
        var applied = 0
        var wasReset = false
        // An interrupted rebuild (a kill in the middle, say) carries on where it stopped.
        let recent = previousAttempt.map { clock().timeIntervalSince($0) < Self.stalestResumableRebuild } ?? false
        let resume = state.rebuilding != .none && state.accountID == accountID && recent
        if !resume && (full || state.cursor == 0 || state.accountID != accountID || state.rebuilding != .none) {
            try store.beginRebuild(accountID: accountID)
            state = try store.syncState()
        }
        var rebuilding = state.rebuilding != .none
        var cursor = rebuilding ? state.rebuildCursor : state.cursor
        // The portfolio snapshot is valued by the server while the pages come.
        let client = self.client, raw = rawPages
        let portfolio = Task {
            if let raw { return try PortfolioAnswerReader.portfolio(try await raw.get(WireOperations.getPortfolio, [])) }
            return try await client.getPortfolio().checked().ok.body.json
        }
        defer { portfolio.cancel() }
        // The pages are fetched one after another while they are written: the server's work and
        // ours overlap, and the server starts on a page as soon as the one before it is in.
        let pages = PageQueue(ahead: Self.pagesAhead, from: cursor, rebuilding: rebuilding) { [self] in try await fetch(cursor: $0, rebuild: $1) }
        defer { pages.cancel() }
        while let page = try await pages.next() {
            try Task.checkCancellation()
            if page.reset && !rebuilding {
                // The cursor is older than the server's change log: rebuild, starting with this page.
                try store.beginRebuild(accountID: accountID)
                rebuilding = true
                wasReset = true
            }
            if let total = page.total { expectedTotal?(Int(total)) }
            applied += try apply(page)
            progress(applied)
            cursor = page.cursor
            if !reusesFreedPages { ProcessMemory.releaseFreedMemory() }
        }
        // The pages' memory goes back to the system before a rebuild's indexes take theirs.
        ProcessMemory.releaseFreedMemory()
        if rebuilding {
            finishing()
            try store.finishRebuild(accountID: accountID)
        }
        try store.savePortfolio(try await portfolio.value)
        let evicted = try store.evict(before: clock().addingTimeInterval(-retention.seconds))
        return Outcome(changes: applied, full: rebuilding, reset: wasReset, cursor: cursor, evicted: evicted)
    }

    /// Pages fetched but not yet written, at most: the fetcher waits when it is this far ahead.
    static let pagesAhead = 2

    /// The sync's pages in order, fetched by a task of their own up to `ahead` pages before the
    /// writer, each request sent as soon as the page before it is in (its cursor is the next one's).
    /// A page that says the cursor was reset makes the pages after it rebuild pages, as the writer
    /// makes them.
    final class PageQueue: Sendable {
        private let permits: AsyncStream<Void>.Continuation
        private let fetcher: Task<Void, Never>
        private nonisolated(unsafe) var iterator: AsyncThrowingStream<Page, any Error>.AsyncIterator

        init(ahead: Int, from cursor: Int64, rebuilding: Bool, fetch: @escaping @Sendable (Int64, Bool) async throws -> Page) {
            let (pages, delivered) = AsyncThrowingStream<Page, any Error>.makeStream()
            let (permitStream, permits) = AsyncStream<Void>.makeStream()
            for _ in 0..<ahead { permits.yield() }
            fetcher = Task {
                // On the requests' own thread, where each request is performed in place: a page's
                // answer is read, and the next page asked for, without a hand-over to another
                // thread and back. (With the writer on the cache's thread, each page is one more
                // hand-over, to it: fetched from the runtime's threads, a first fill of 1.5 M
                // changes took 4 % longer; fetched here, as long as before.)
                await InPlaceRequests.run {
                    var cursor = cursor, rebuilding = rebuilding
                    var permit = permitStream.makeAsyncIterator()
                    do {
                        while await permit.next() != nil {
                            let page = try await fetch(cursor, rebuilding)
                            delivered.yield(page)
                            guard page.hasMore else { break }
                            cursor = page.cursor
                            rebuilding = rebuilding || page.reset
                        }
                        delivered.finish()
                    } catch {
                        delivered.finish(throwing: error)
                    }
                }
            }
            self.permits = permits
            self.iterator = pages.makeAsyncIterator()
        }

        /// The next page (nil after the last), letting the fetcher one page further ahead. Called
        /// by one task at a time.
        func next() async throws -> Page? {
            let page = try await iterator.next(isolation: nil)
            if page != nil { permits.yield() }
            return page
        }

        func cancel() {
            fetcher.cancel()
            permits.finish()
        }
    }

    /// A page as it came: decoded by the generated client, or its bytes and the fields read from them.
    enum Page: Sendable {
        case decoded(Components.Schemas.SyncPage)
        case raw([UInt8], SyncPageReader.Outline)

        var cursor: Int64 {
            switch self {
            case .decoded(let p): p.cursor;
            case .raw(_, let o): o.header.cursor
            }
        }
        var hasMore: Bool {
            switch self {
            case .decoded(let p): p.hasMore;
            case .raw(_, let o): o.header.hasMore
            }
        }
        var reset: Bool {
            switch self {
            case .decoded(let p): p.reset;
            case .raw(_, let o): o.header.reset
            }
        }
        var total: Int64? {
            switch self {
            case .decoded(let p): p.total;
            case .raw(_, let o): o.header.total
            }
        }
    }

    private func fetch(cursor: Int64, rebuild: Bool) async throws -> Page {
        guard let rawPages else {
            return .decoded(try await client.getSyncChanges(query: .init(cursor: cursor, limit: pageSize, rebuild: rebuild)).checked().ok.body.json)
        }
        let bytes = try await rawPages.get(WireOperations.getSyncChanges, ["\(cursor)", "\(pageSize)", "\(rebuild)"])
        do {
            return .raw(bytes, try bytes.withUnsafeBytes { try SyncPageReader.outline(of: $0) })
        } catch is SyncPageReader.Unsupported {
            return .decoded(try bytes.withUnsafeBytes { try SyncPageReader.decode($0) })
        }
    }

    /// Applies a page; answers how many changes it held.
    private func apply(_ page: Page) throws -> Int {
        switch page {
        case .decoded(let decoded):
            try store.apply(decoded)
            return decoded.changes.count
        case .raw(let bytes, let outline):
            do {
                return try bytes.withUnsafeBytes { try store.apply(json: $0, outline: outline) }
            } catch is SyncPageReader.Unsupported {
                // Something the fast reader leaves alone: the generated types read it as they always did.
                let decoded = try bytes.withUnsafeBytes { try SyncPageReader.decode($0) }
                // The next page was asked for by the fields read before the changes: the page read
                // whole must say the same. A field given again after the changes could say otherwise
                // to a decoder that kept a key's last value (JSONDecoder keeps its first, as the
                // outline does).
                let header = outline.header
                guard decoded.cursor == header.cursor, decoded.hasMore == header.hasMore, decoded.reset == header.reset else {
                    throw RaxxError(
                        code: .badResponse, message: "The server's sync page says two different things about where it ends.",
                        hint: "The server may run another version of the API.")
                }
                try store.apply(decoded)
                return decoded.changes.count
            }
        }
    }
}

/// Why a refresh failed, as `raxx-cache status` and the staleness disclosure read it.
enum RefreshFailure: String {
    case offlineHard = "offline-hard"
    case offlineSoft = "offline-soft"
    case signedOut = "signed-out"
    case cancelled
    case error

    init(_ error: any Error, mapped: RaxxError) {
        if let state = ErrorMapping.connectivity(of: error), state.isOffline {
            self = state == .offlineHard ? .offlineHard : .offlineSoft
        } else {
            switch mapped.status {
            case .signInRequired: self = .signedOut
            case .cancelled: self = .cancelled
            default: self = .error
            }
        }
    }

    /// The connectivity the failure shows (a signed-out answer still came from the server).
    var connectivity: Connectivity? {
        switch self {
        case .offlineHard: .offlineHard
        case .offlineSoft: .offlineSoft
        case .signedOut: .online
        case .cancelled, .error: nil
        }
    }
}

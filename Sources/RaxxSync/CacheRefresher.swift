import Foundation
import RaxxAPI
import RaxxCore
import RaxxHTTP
import RaxxStore

#if canImport(Glibc)
import Glibc
#endif

/// The delta refresh: pages from Raptor's sync endpoint applied to the cache one transaction at a
/// time (memory stays flat whatever the size), resets rebuilt out of readers' sight, the portfolio
/// snapshot refreshed, retention applied; a failure is recorded (kind, time, message) and the data
/// left as it was.
public struct CacheRefresher: Sendable {
    public let store: CacheStore
    /// A client that signs requests with the session's token.
    public let client: Client
    public let accountID: String
    public let clock: @Sendable () -> Date
    /// Changes per page: two pages are in memory at once (one written, one fetched).
    public var pageSize = 2000
    /// Fills and closed orders older than this are evicted after a refresh.
    public var retention: RaxxDuration
    /// Hears the number of changes applied so far.
    public var progress: @Sendable (Int) -> Void = { _ in }

    public init(store: CacheStore, client: Client, accountID: String, retention: RaxxDuration, clock: @escaping @Sendable () -> Date) {
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

    public func refresh(full: Bool = false) async throws -> Outcome {
        let started = clock()
        let previousAttempt = try store.syncState().lastAttemptAt
        try store.recordAttempt(at: started)
        do {
            let outcome = try await run(full: full, previousAttempt: previousAttempt)
            try store.recordSuccess(at: clock())
            return outcome
        } catch {
            let e = ErrorMapping.raxxError(from: error)
            let (kind, connectivity): (String, Connectivity?) = switch e.code {
            case "offline": ("offline-hard", .offlineHard)
            case "unavailable", "rate_limited": ("offline-soft", .offlineSoft)
            case "sign_in_required", "no_passkey": ("signed-out", .online)
            case "cancelled": ("cancelled", nil)
            default: ("error", nil)
            }
            try? store.recordFailure(kind: kind, message: e.message, connectivity: connectivity, at: clock())
            throw e
        }
    }

    private func run(full: Bool, previousAttempt: Date?) async throws -> Outcome {
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
        let client = self.client
        let portfolio = Task { try await client.getPortfolio() }
        defer { portfolio.cancel() }
        var page = try await fetch(cursor: cursor, rebuild: rebuilding)
        while true {
            try Task.checkCancellation()
            if page.reset && !rebuilding {
                // The cursor is older than the server's change log: rebuild, starting with this page.
                try store.beginRebuild(accountID: accountID)
                rebuilding = true
                wasReset = true
            }
            // Ask for the next page while this one is written: the server's work and ours overlap.
            let next: Task<Components.Schemas.SyncPage, any Error>? = page.hasMore
                ? Task { [cursor = page.cursor, rebuilding] in try await fetch(cursor: cursor, rebuild: rebuilding) } : nil
            do {
                try store.apply(page)
            } catch {
                next?.cancel()
                throw error
            }
            applied += page.changes.count
            progress(applied)
            cursor = page.cursor
            guard let next else { break }
            page = try await next.value
            // Hand freed page memory back to the system, so a long sync's peak stays that of a page.
            Self.releaseFreedMemory()
        }
        if rebuilding { try store.finishRebuild(accountID: accountID) }
        switch try await portfolio.value {
        case .ok(let ok): try store.savePortfolio(try ok.body.json)
        case .default(_, let problem): throw try problem.raxxError
        }
        let evicted = try store.evict(before: clock().addingTimeInterval(-retention.seconds))
        return Outcome(changes: applied, full: rebuilding, reset: wasReset, cursor: cursor, evicted: evicted)
    }

    static func releaseFreedMemory() {
        #if os(Linux)
        _ = glibcMallocTrim(0)
        #endif
    }

    private func fetch(cursor: Int64, rebuild: Bool) async throws -> Components.Schemas.SyncPage {
        switch try await client.getSyncChanges(query: .init(cursor: cursor, limit: pageSize, rebuild: rebuild)) {
        case .ok(let ok): return try ok.body.json
        case .default(_, let problem): throw try problem.raxxError
        }
    }
}

/// One at a time: an exclusive lock on a file (beside the cache for refreshes, beside the order
/// journal for raxx-order), held until released.
public final class RefreshLock: @unchecked Sendable {
    private let fd: Int32

    /// Takes the lock, waiting up to `wait` (none: fail at once, exit 75) for its holder to finish.
    public init(directory: URL, name: String = "refresh.lock", wait: RaxxDuration?,
                busy: String = "Another refresh is running.") async throws {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = directory.appendingPathComponent(name).path
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw RaxxError.failure(code: "cache_unwritable", "Could not open \(path).") }
        let deadline = ContinuousClock.now + .milliseconds(wait?.milliseconds ?? 0)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else {
                close(fd)
                throw RaxxError(code: name == "refresh.lock" ? "refresh_running" : "busy", message: busy,
                                hint: wait == nil ? "Try again when it is done." : "It did not finish within \(wait!).", status: .temporary)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

#if os(Linux)
/// glibc's malloc_trim(3), which the Glibc module does not export (it lives in <malloc.h>).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif

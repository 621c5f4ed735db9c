import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore
import RaxxStore

extension RaxxCache {
    /// `raxx-cache refresh`: pull what changed since the last refresh.
    public struct Refresh: RaxxCacheVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "refresh",
            abstract: "Bring the cache up to date with Raptor (a delta pull).",
            discussion: """
                Applies the changes since the stored cursor, page by page, each page in one transaction with \
                its cursor; deletions arrive as tombstones; when the server's change log no longer reaches back \
                to the cursor, the cache is rebuilt without readers ever seeing a half-built copy. Two refreshes \
                never run at once: a second one waits up to a minute, or with --no-wait exits 75 at once. \
                Offline it exits 69, leaves the cache as it was and records the failure for status and for reads. 
                """ + connectivity.helpLine
        )

        @Flag(help: "Rebuild the whole cache instead of pulling a delta.")
        var full = false

        @Flag(name: .customLong("no-wait"), help: "Exit 75 at once when another refresh is running.")
        var noWait = false

        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var changes: Int
            var full: Bool
            var reset: Bool
            var cursor: Int64
            var evicted: Int
            var seconds: Double
            var cache: String
            var size_bytes: Int64
        }

        public func run(_ context: CommandContext) async throws {
            let configuration = context.configuration
            // libcurl loads while the lock is taken and the cache opened.
            context.world.raptor.prepare()
            let stores = try context.stores
            let lock = try await stores.lock(.refresh, wait: noWait ? nil : .seconds(60))
            defer { lock.release() }
            // The storage policy: half the history, and half the size, while the disk is low on space.
            let limits = StorageLimits(
                retention: configuration.cacheRetention, sizeCap: configuration.cacheSizeCap,
                freeBytes: stores.freeBytes())
            if limits.halved {
                context.say("Low disk space: the cache keeps half its usual history for now (\(limits.retention), at most \(limits.sizeCap >> 20) MiB).")
            }
            let monotonic = context.world.monotonic
            let started = monotonic()
            var store: CacheStore
            var outcome: CacheRefresher.Outcome
            do {
                store = try stores.cache()
                outcome = try await refresh(store, limits: limits, full: full, context)
            } catch let error as RaxxError where error.is(.cacheDamaged) {
                // It is only a cache: set the damaged file aside and build it again from the server.
                let aside = try stores.setDamagedCacheAside()
                context.say("The cache was damaged; it was set aside (\(aside)) and is being rebuilt.")
                store = try stores.cache()
                outcome = try await refresh(store, limits: limits, full: true, context)
            }
            let size = store.fileSize
            if size > limits.sizeCap {
                context.warn(
                    "warning: the cache is \(size >> 20) MiB, over its \(limits.sizeCap >> 20) MiB cap; "
                        + "consider raxx-cache purge --older-than 90d (or set RAXX_CACHE_MAX_SIZE).")
            }
            // --quiet: nothing on success either (cron mails only what needs a person).
            guard !context.quiet else { return }
            let record = Record(
                changes: outcome.changes, full: outcome.full, reset: outcome.reset, cursor: outcome.cursor,
                evicted: outcome.evicted, seconds: ((monotonic() - started) / .milliseconds(1)).rounded() / 1000,
                cache: stores.cacheLocation, size_bytes: size)
            try context.emit([record], columns: [.init("Changes", .right), .init("Full"), .init("Cursor", .right), .init("Seconds", .right)]) {
                ["\($0.changes)", $0.full ? ($0.reset ? "yes (reset)" : "yes") : "no", "\($0.cursor)", String(format: "%.2f", $0.seconds)]
            }
        }

        /// One refresh of `store` for the signed-in account, with progress on a terminal.
        func refresh(_ store: CacheStore, limits: StorageLimits, full: Bool, _ context: CommandContext) async throws -> CacheRefresher.Outcome {
            let accountID: String
            do {
                accountID = try context.storedSession().accountID
            } catch {
                try? store.recordFailure(kind: "signed-out", message: error.message, connectivity: nil, at: context.clock())
                throw error
            }
            var refresher = CacheRefresher(
                store: store, client: try context.signedInAPI(), accountID: accountID,
                retention: limits.retention, clock: context.clock)
            refresher.rawPages = try context.signedInRaw()
            // On a terminal, a progress line: changes applied, of the rows a rebuild brings, with the
            // rate and the time left; cleared at the end, so the summary or the prompt starts clean.
            let line = context.progressLine("refreshing", unit: "changes")
            if context.io.stderrIsTTY && !context.quiet {
                refresher.progress = { line.update(done: $0) }
                refresher.expectedTotal = { line.setTotal($0) }
                refresher.finishing = { line.step("building the cache's indexes") }
            }
            defer { line.finish() }
            return try await refresher.refresh(full: full)
        }
    }
}

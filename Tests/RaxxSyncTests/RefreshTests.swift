import Foundation
import GRDB
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxSandbox
import RaxxSandboxTestSupport
import RaxxSecrets
import RaxxStore
import RaxxTestSupport
import RaxxVault
import Synchronization
import Testing

/// A seeded sandbox database, a signed-in keystore and a cache, all in a folder of the test's own,
/// with one hand-moved clock.
final class CacheRig: @unchecked Sendable {
    let clock = TestClock(Date(timeIntervalSince1970: 1_795_000_000))
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-sync-\(UUID().uuidString)")
    let database: SandboxDatabase
    var configuration = SandboxConfiguration(accessTokenTTL: .hours(1), sessionTTL: .hours(24))
    let email = "trader@example.com"

    init(positions: Int = 40, fills: Int = 600, retention: RaxxDuration = .hours(24)) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try "0a0b0c0d0e0f00010203040506070809".write(to: folder.appendingPathComponent("machine-id"), atomically: true, encoding: .utf8)
        database = try SandboxDatabase(path: folder.appendingPathComponent("sandbox.sqlite").path)
        configuration.changeRetention = retention
        _ = try Seeder(database: database, market: Market()).seed(email: email, positions: positions, fills: fills, now: clock.now)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    var keystore: Keystore { Keystore(directory: folder.appendingPathComponent("state"), machineIDPath: folder.appendingPathComponent("machine-id").path) }

    /// The rule the rig's stores are held to, from its folder down.
    var folders: PrivateFolders { PrivateFolders(roots: [folder.path]) }

    func store() throws -> CacheStore { try CacheStore.open(at: folder.appendingPathComponent("cache/cache.sqlite"), in: folders) }

    /// Registers a passkey for the seeded account and answers a refresher against `url`.
    func refresher(_ url: URL, store: CacheStore) async throws -> CacheRefresher {
        let plain = try generatedClient(url)
        let endpoint = try APIEndpoint(parsing: url.absoluteString)
        let tokens = SessionTokens(keystore: keystore, client: plain, origin: endpoint.origin, clock: clock.closure)
        let authed = try generatedClient(url, middlewares: [BearerTokenMiddleware(tokens: tokens)])
        if try keystore.load().onlyServer.session == nil {
            _ = try await Ceremonies(keystore: keystore, client: plain, authenticatedClient: authed, endpoint: endpoint, clock: clock.closure)
                .register(email: email, pin: .init { _ in SecretBytes(copying: Array("246813".utf8)) }, code: database.mailbox.codePrompt)
        }
        let accountID = try #require(try keystore.load().onlyServer.session?.accountID)
        var refresher = CacheRefresher(store: store, client: authed, accountID: accountID, retention: .hours(24 * 365), clock: clock.closure)
        refresher.pageSize = 97  // many pages, to exercise paging
        return refresher
    }

    func run(_ body: (URL) async throws -> Void) async throws {
        try await withSandbox(configuration: configuration, database: database, clock: clock.closure, body)
    }

    func churn(changes: Int, deletes: Int, round: UInt64 = 1) throws {
        _ = try Seeder(database: database, market: Market()).churn(email: email, changes: changes, deletes: deletes, round: round, now: clock.now)
    }

    func serverSummary(_ url: URL, since: Date?) async throws -> Components.Schemas.SyncSummary {
        let tokens = SessionTokens(
            keystore: keystore, client: try generatedClient(url), origin: try APIEndpoint(parsing: url.absoluteString).origin,
            clock: clock.closure)
        return try await generatedClient(url, middlewares: [BearerTokenMiddleware(tokens: tokens)]).getSyncSummary(query: .init(since: since)).ok.body.json
    }
}

func matches(_ local: [String: CacheStore.EntitySummary], _ remote: Components.Schemas.SyncSummary) -> Bool {
    local["positions"] == .init(count: remote.positions.count, checksum: remote.positions.checksum)
        && local["fills"] == .init(count: remote.fills.count, checksum: remote.fills.checksum)
        && local["orders"] == .init(count: remote.orders.count, checksum: remote.orders.checksum)
}

@Suite(.serialized) struct RefreshTests {
    @Test func aFullRefreshThenDeltasMatchTheServer() async throws {
        let rig = try CacheRig()
        let store = try rig.store()
        try await rig.run { url in
            let refresher = try await rig.refresher(url, store: store)
            let first = try await refresher.refresh()
            #expect(first.full && !first.reset)
            let counts = try store.counts()
            #expect(counts["positions"] == 40 && counts["fills"] == 600 && counts["portfolio"] == 1)
            #expect(matches(try store.summary(since: nil), try await rig.serverSummary(url, since: nil)))

            try rig.churn(changes: 12, deletes: 4)
            rig.clock.advance(by: 60)
            let delta = try await refresher.refresh()
            #expect(!delta.full)
            #expect(delta.changes == 12)
            #expect(try store.counts()["positions"] == 36)
            #expect(matches(try store.summary(since: nil), try await rig.serverSummary(url, since: nil)))
            #expect(try store.syncState().lastSuccessAt == rig.clock.now)

            let idle = try await refresher.refresh()
            #expect(idle.changes == 0)
        }
    }

    /// A refresh's writes (each page's transaction, a rebuild's index build) block a thread of their
    /// own, never one of the concurrency runtime's (two on these machines): what the refresh runs
    /// between its awaits runs there, as the progress heard after each page's write and the
    /// rebuild's last step show.
    @Test func aRefreshBlocksAThreadOfItsOwnNeverTheRuntimes() async throws {
        let rig = try CacheRig()
        let store = try rig.store()
        try await rig.run { url in
            var refresher = try await rig.refresher(url, store: store)
            let onItsThread = Mutex<[Bool]>([])
            refresher.progress = { _ in onItsThread.withLock { $0.append(CacheStore.thread.isCurrent) } }
            refresher.finishing = { onItsThread.withLock { $0.append(CacheStore.thread.isCurrent) } }
            let outcome = try await refresher.refresh()
            #expect(outcome.full)
            let seen = onItsThread.withLock { $0 }
            #expect(seen.count > 2)
            #expect(!seen.contains(false), "\(seen)")
        }
    }

    /// Every row the cache holds, every field: what two caches are compared by.
    func rows(_ store: CacheStore) throws -> [String] {
        var out: [String] = []
        try store.positions(CacheQuery()) { out.append("\($0)") }
        try store.fills(CacheQuery()) { out.append("\($0)") }
        try store.orders(CacheQuery()) { out.append("\($0)") }
        return out
    }

    @Test func pagesReadAsBytesFillTheSameCacheAsDecodedPages() async throws {
        let rig = try CacheRig()
        let decodedStore = try rig.store()
        let rawStore = try CacheStore.open(at: rig.folder.appendingPathComponent("cache/raw.sqlite"), in: rig.folders)
        try await rig.run { url in
            let decoded = try await rig.refresher(url, store: decodedStore)
            var raw = try await rig.refresher(url, store: rawStore)
            let configuration = try RaxxConfiguration(environment: ["HOME": "/tmp", "RAXX_API_URL": url.absoluteString])
            let tokens = SessionTokens(
                keystore: rig.keystore, client: try generatedClient(url),
                origin: try APIEndpoint(parsing: url.absoluteString).origin, clock: rig.clock.closure)
            raw.rawPages = RaptorClient.makeRaw(
                tool: "raxx-test", configuration: configuration,
                middlewares: [BearerTokenMiddleware(tokens: tokens)])
            let first = try await decoded.refresh()
            #expect(try await raw.refresh() == first)
            #expect(try rows(rawStore) == rows(decodedStore))
            #expect(matches(try rawStore.summary(since: nil), try await rig.serverSummary(url, since: nil)))

            try rig.churn(changes: 12, deletes: 4)
            rig.clock.advance(by: 60)
            let delta = try await decoded.refresh()
            #expect(try await raw.refresh() == delta)
            #expect(!delta.full && delta.changes == 12)
            #expect(try rows(rawStore) == rows(decodedStore))
            #expect(try rawStore.syncState().cursor == decodedStore.syncState().cursor)
        }
    }

    @Test func anOldCursorGetsAResetAndARebuild() async throws {
        let rig = try CacheRig(retention: .hours(1))
        let store = try rig.store()
        try await rig.run { url in
            let refresher = try await rig.refresher(url, store: store)
            _ = try await refresher.refresh()
            try rig.churn(changes: 6, deletes: 3)  // tombstones the cache never pulls…
            rig.clock.advance(by: 2 * 3600)  // …until they are past the server's retention
            try rig.churn(changes: 2, deletes: 0, round: 2)
            let outcome = try await refresher.refresh()
            #expect(outcome.reset && outcome.full)
            #expect(try store.counts()["positions"] == 37)
            #expect(matches(try store.summary(since: nil), try await rig.serverSummary(url, since: nil)))
        }
    }

    @Test func offlineLeavesTheCacheAsItWasAndRecordsWhy() async throws {
        let rig = try CacheRig()
        let store = try rig.store()
        var accountID = ""
        try await rig.run { url in
            let refresher = try await rig.refresher(url, store: store)
            accountID = refresher.accountID
            _ = try await refresher.refresh()
        }
        let before = try store.summary(since: nil)
        let listener = try LoopbackListener(.refuse)
        // The session's own server has gone away: the same origin's session, a server that refuses.
        let origin = try #require(try rig.keystore.load().servers.keys.first)
        let tokens = SessionTokens(
            keystore: rig.keystore, client: try generatedClient(URL(string: listener.url)!), origin: origin,
            clock: rig.clock.closure)
        let offline = CacheRefresher(
            store: store, client: try generatedClient(URL(string: listener.url)!, middlewares: [BearerTokenMiddleware(tokens: tokens)]),
            accountID: accountID, retention: .hours(24), clock: rig.clock.closure)
        rig.clock.advance(by: 30)
        do {
            _ = try await offline.refresh()
            Issue.record("an offline refresh succeeded")
        } catch let error as RaxxError {
            #expect(error.status == .unavailable)
        }
        let state = try store.syncState()
        #expect(state.lastErrorKind == "offline-hard")
        #expect(state.lastRefreshFailedOffline)
        #expect(state.connectivity == .offlineHard)
        #expect(try store.summary(since: nil) == before)
    }

    @Test func retentionEvictsOldHistoryAndVerifyStillMatches() async throws {
        let rig = try CacheRig()
        let store = try rig.store()
        try await rig.run { url in
            var refresher = try await rig.refresher(url, store: store)
            refresher.retention = .hours(24 * 30)  // seeded history spans 90 days
            let outcome = try await refresher.refresh()
            #expect(outcome.evicted > 0)
            let since = try store.syncState().evictedBefore
            #expect(since != nil)
            #expect(matches(try store.summary(since: since), try await rig.serverSummary(url, since: since)))
        }
    }
}

extension KeystoreContents {
    /// The one server these tests sign in to.
    var onlyServer: ServerCredentials { servers.values.first ?? ServerCredentials() }
}

import Foundation
import RaxxAPI
import RaxxCacheCommand
import RaxxClient
import RaxxCore
import RaxxStore
import RaxxTestSupport
import Testing

/// `raxx-cache refresh` in-process: pages from the (stub) server into an in-memory cache.
@Suite struct RefreshTests {
    func world(_ stores: MemoryStores = MemoryStores()) -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stores = stores
        return world
    }

    @Test func aFirstRefreshFillsTheCache() async throws {
        let stores = MemoryStores()
        let world = world(stores)
        world.api.onGetSyncChanges { input in
            #expect(input.query.cursor == 0 && input.query.rebuild == true)
            return .ok(.init(body: .json(Fixtures.syncPage())))
        }
        world.api.onGetPortfolio { _ in .ok(.init(body: .json(Fixtures.portfolio()))) }
        #expect(try await world.run(RaxxCache.Refresh.self) == .ok)
        let line = try #require(world.jsonLines.first)
        #expect(line["changes"] as? Int == 4 && line["full"] as? Bool == true && line["cursor"] as? Int == 4)
        #expect(world.api.calls.allSatisfy { $0.authorization == "Bearer access-1" })
        let cache = try #require(try stores.existingCache())
        #expect(try cache.counts()["positions"] == 2)
        #expect(try cache.syncState().lastSuccessAt == Fixtures.now)
    }

    @Test func onATerminalShowsProgressAndEndsTheLineSoNothingIsGluedToIt() async throws {
        let stores = MemoryStores()
        let world = world(stores)
        world.stderrIsTTY = true
        let clock = try #require(world.clock)
        // The first page says how many changes the sync brings: the line's total, with no other
        // request (the summary, which checksums every row, is not asked for).
        world.api.onGetSyncChanges { _ in
            clock.advance(by: 2)  // a slow page: the line is drawn after it
            var page = Fixtures.syncPage()
            page.total = 4
            return .ok(.init(body: .json(page)))
        }
        world.api.onGetPortfolio { _ in .ok(.init(body: .json(Fixtures.portfolio()))) }
        #expect(try await world.run(RaxxCache.Refresh.self) == .ok)
        let stderr = world.stderr.contents
        #expect(stderr.contains(ProgressLine.clearSequence + "refreshing: 4 of 4 changes  100%"), "\(stderr.debugDescription)")
        #expect(stderr.hasSuffix(ProgressLine.clearSequence), "the line is cleared at the end: \(stderr.debugDescription)")
        #expect(world.jsonLines.first?["changes"] as? Int == 4)
    }

    @Test func offlineExits69AndRecordsTheFailure() async throws {
        let stores = MemoryStores()
        let world = world(stores)
        world.api.onGetSyncChanges { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused") }
        world.api.onGetPortfolio { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused") }
        #expect(try await world.run(RaxxCache.Refresh.self, ["--format", "text"]) == .unavailable)
        #expect(world.stderr.contents.hasPrefix("raxx-cache: This action requires an internet connection."))
        let state = try #require(try stores.existingCache()).syncState()
        #expect(state.lastErrorKind == "offline-hard" && state.connectivity == .offlineHard)
        #expect(state.lastSuccessAt == nil)
    }

    @Test func anotherRefreshRunningExits75WithNoWait() async throws {
        let stores = MemoryStores()
        stores.hold(.refresh)
        let world = world(stores)
        #expect(try await world.run(RaxxCache.Refresh.self, ["--no-wait", "--json"]) == .temporary)
        #expect(world.stderr.contents.contains(#""code":"refresh_running""#))
        #expect(world.api.calls.isEmpty)
    }

    @Test func signedOutExits4AndSaysSoInStatus() async throws {
        let stores = MemoryStores()
        let world = world(stores)
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxCache.Refresh.self) == .signInRequired)
        #expect(try #require(try stores.existingCache()).syncState().lastErrorKind == "signed-out")
        #expect(world.api.calls.isEmpty)
    }

    @Test func lowDiskSpaceHalvesTheLimitsAndStatusShowsThem() async throws {
        let stores = MemoryStores(freeBytes: 100_000_000)
        let world = world(stores)
        world.api.onGetSyncChanges { _ in .ok(.init(body: .json(Fixtures.syncPage()))) }
        world.api.onGetPortfolio { _ in .ok(.init(body: .json(Fixtures.portfolio()))) }
        #expect(try await world.run(RaxxCache.Refresh.self) == .ok)
        #expect(world.stderr.contents.contains("Low disk space: the cache keeps half its usual history for now (182d12h, at most 512 MiB)."))
        let status = TestWorld()
        status.stores = stores
        #expect(try await status.run(RaxxCache.Status.self) == .ok)
        let line = try #require(status.jsonLines.first)
        #expect(line["low_disk_space"] as? Bool == true && line["retention"] as? String == "182d12h")
        #expect(line["size_cap_bytes"] as? Int == 512 << 20)
    }

    @Test func withRoomToSpareTheLimitsAreTheConfiguredOnes() async throws {
        let stores = MemoryStores(cache: try Fixtures.filledCache(), freeBytes: 50_000_000_000)
        let status = TestWorld()
        status.stores = stores
        #expect(try await status.run(RaxxCache.Status.self) == .ok)
        #expect(status.jsonLines.first?["low_disk_space"] as? Bool == false)
        #expect(status.jsonLines.first?["retention"] as? String == "365d")
    }
}

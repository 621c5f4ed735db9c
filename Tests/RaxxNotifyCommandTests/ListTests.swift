import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxNotifyCommand
import RaxxSecrets
import RaxxStore
import RaxxTestSupport
import RaxxVault
import Testing

/// `raxx-notify list` in-process: fetched, kept, printed newest last; offline from what was kept.
@Suite struct NotifyListTests {
    func world(_ stores: MemoryStores = MemoryStores()) -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stores = stores
        return world
    }

    @Test func fetchesWhatIsNewKeepsItAndPrintsNewestLast() async throws {
        let stores = MemoryStores()
        let world = world(stores)
        world.api.onListEvents { input in
            switch input.query.cursor ?? 0 {
            case 0: .ok(.init(body: .json(Fixtures.alerts([1, 2], hasMore: true))))
            case 2: .ok(.init(body: .json(Fixtures.alerts([3]))))
            default: .ok(.init(body: .json(Fixtures.alerts([], cursor: input.query.cursor))))
            }
        }
        #expect(try await world.run(RaxxNotify.List.self, ["--limit", "2"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["seq"] as? Int } == [2, 3])
        #expect(world.jsonLines.first?["order_id"] as? String == "ord-2")
        #expect(world.api.calls.allSatisfy { $0.authorization == "Bearer access-1" })
        #expect(try stores.alerts().latestSeq() == 3)
    }

    /// A table for people: times in the local zone, compactly; JSON keeps RFC 3339 UTC.
    @Test func theTableShowsTimesForPeople() async throws {
        let world = world()
        world.environment["TZ"] = "Europe/Paris"
        world.api.onListEvents { input in .ok(.init(body: .json(Fixtures.alerts((input.query.cursor ?? 0) == 0 ? [1] : [])))) }
        #expect(try await world.run(RaxxNotify.List.self, ["--format", "text"]) == .ok)
        let table = world.stdout.contents
        #expect(!table.contains("T10:") && !table.contains("Z "), "\(table)")
        #expect(world.stdout.contents.hasPrefix("SEQ  TIME"))
    }

    @Test func offlineItAnswersFromWhatWasKeptAndSaysHowOld() async throws {
        let stores = MemoryStores()
        try stores.alerts().save([Fixtures.alert(1), Fixtures.alert(2, .orderRejected)], fetchedAt: Fixtures.now.addingTimeInterval(-3600))
        let world = world(stores)
        world.api.onListEvents { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused") }
        world.environment["TZ"] = "UTC"
        #expect(try await world.run(RaxxNotify.List.self, ["--type", "order_rejected"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["seq"] as? Int } == [2])
        #expect(world.stderr.contents == "No connection — data last updated at 09:00 (1h ago)\n")
    }

    @Test func cachedNeverAsksAndNothingKeptExits3() async throws {
        let world = world()
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxNotify.List.self, ["--cached", "--format", "text"]) == .stale)
        #expect(world.stderr.contents.contains("No alerts fetched yet"))
        #expect(world.api.calls.isEmpty)
        #expect(try RaxxNotify.List.parse(["--cached"]).requirement == .offlineCapable)
    }

    /// The server says the account was erased: the device forgets its passkey, session and local
    /// data before the error is reported (exit 4, no HTTP status).
    @Test func anAccountThatNoLongerExistsIsForgottenHere() async throws {
        let world = world()
        let passkey = try SoftwareAuthenticator.makeCredential(
            rpID: "raxx.app", userHandle: [1, 2, 3], email: Fixtures.email,
            clientDataHash: [UInt8](repeating: 0, count: 32),
            pin: SecretBytes(copying: Array("246813".utf8)), now: Fixtures.now
        ).credential
        world.keystore = Fixtures.keystore(credential: passkey, session: Fixtures.session(at: Fixtures.now))
        let account = try #require(world.keystore?.current?[Fixtures.origin].session?.accountID)
        world.api.onListEvents { _ in .default(statusCode: 401, Fixtures.problem(401, code: "account_closed", title: "This account no longer exists.")) }
        #expect(try await world.run(RaxxNotify.List.self, ["--format", "text"]) == .signInRequired)
        #expect(world.stderr.contents.contains("This account no longer exists"))
        #expect(!world.stderr.contents.contains("401"))
        #expect(world.keystore?.current?[Fixtures.origin].isEmpty == true)
        #expect(world.accounts.forgotten == [account])
    }

    @Test func anUnknownTypeIsAUsageError() {
        #expect(throws: (any Error).self) { try RaxxNotify.List.parse(["--type", "fill_confirmed,price_alert"]) }
    }
}

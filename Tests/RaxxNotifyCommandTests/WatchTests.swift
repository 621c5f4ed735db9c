import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxNotifyCommand
import RaxxStore
import RaxxTestSupport
import Testing

/// `raxx-notify watch` in-process: lines as alerts come, the cursor saved after each line.
@Suite struct NotifyWatchTests {
    func world(_ stores: MemoryStores) -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stores = stores
        return world
    }

    @Test func onceTwicePrintsNothingTheSecondTime() async throws {
        let stores = MemoryStores()
        let world = world(stores)
        world.api.onListEvents { input in
            (input.query.cursor ?? 0) < 2 ? .ok(.init(body: .json(Fixtures.alerts([1, 2])))) : .ok(.init(body: .json(Fixtures.alerts([], cursor: 2))))
        }
        #expect(try await world.run(RaxxNotify.Watch.self, ["--once"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["seq"] as? Int } == [1, 2])
        #expect(try stores.alerts().state().watchCursor == 2)
        let again = self.world(stores)
        again.api.onListEvents { input in
            #expect(input.query.cursor == 2)
            return .ok(.init(body: .json(Fixtures.alerts([], cursor: 2))))
        }
        #expect(try await again.run(RaxxNotify.Watch.self, ["--once", "--format", "text"]) == .ok)
        #expect(again.stdout.contents.isEmpty && again.stderr.contents.isEmpty)
    }

    /// An alert whose line could not be written (a full disk) is not passed: the cursor stays
    /// before it, so the next run prints it.
    @Test func anAlertThatCouldNotBeWrittenIsNotPassed() async throws {
        let stores = MemoryStores()
        let world = world(stores)
        world.stdout.failure = "No space left on device"
        world.api.onListEvents { _ in .ok(.init(body: .json(Fixtures.alerts([1, 2])))) }
        #expect(try await world.run(RaxxNotify.Watch.self, ["--once"]) == .failure)
        #expect(world.stderr.contents.contains("Could not write to standard output: No space left on device."))
        #expect(try stores.alerts().state().watchCursor == nil)
    }

    @Test func followsAcrossALostConnectionWithoutSkippingOrRepeating() async throws {
        let stores = MemoryStores()
        let world = world(stores)
        let calls = Counter()
        world.api.onListEvents { input in
            #expect(input.query.wait == 50)
            switch calls.next() {
            case 1: return .ok(.init(body: .json(Fixtures.alerts([1]))))
            case 2, 3: throw TransportFailure(kind: .offlineSoft, curlCode: 28, detail: "timed out")
            case 4:
                #expect(input.query.cursor == 1)  // resumes after the last line written
                return .ok(.init(body: .json(Fixtures.alerts([2, 3]))))
            default:
                world.interrupt()  // SIGINT
                throw CancellationError()
            }
        }
        #expect(try await world.run(RaxxNotify.Watch.self, ["--type", "fill_confirmed"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["seq"] as? Int } == [1, 2, 3])
        #expect(world.stderr.contents == "No connection — waiting\nConnection back.\n")  // said once
        #expect(world.sleeps.count == 2)
        #expect(world.sleeps.allSatisfy { $0 <= .seconds(30) })
        #expect(try stores.alerts().state().watchCursor == 3)
    }

    @Test func signedOutItAsksNothing() async throws {
        let world = world(MemoryStores())
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxNotify.Watch.self, ["--once"]) == .signInRequired)
        #expect(world.api.calls.isEmpty)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.withLock {
            value += 1; return value
        }
    }
}

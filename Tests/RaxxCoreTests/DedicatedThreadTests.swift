import Foundation
import RaxxCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Work handed to a `DedicatedThread` runs there, before and after each await, and what it blocks
/// is that thread alone.
@Suite struct DedicatedThreadTests {
    static let thread = DedicatedThread(name: "raxx-test-lane")

    nonisolated static func here() -> Bool { thread.isCurrent }

    @Test func workRunsOnTheThreadBeforeAndAfterEachAwait() async throws {
        let names = await Self.thread.run { () async -> [Bool] in
            var names = [Self.here()]
            await Task.yield()
            names.append(Self.here())
            _ = await Task.detached { 1 }.value
            names.append(Self.here())
            // A continuation resumed on another thread.
            await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
                Thread.detachNewThread { resumed.resume() }
            }
            names.append(Self.here())
            return names
        }
        #expect(names == [true, true, true, true])
        #expect(!Self.thread.isCurrent)
    }

    /// The system shows the thread by its name (`ps -L`, a debugger).
    @Test func theSystemKnowsTheThreadByItsName() async {
        let name = await Self.thread.run { () async -> String in
            var buffer = [CChar](repeating: 0, count: 16)
            _ = glibcThreadName(pthread_self(), &buffer, buffer.count)
            return String(cString: buffer)
        }
        #expect(name == "raxx-test-lane")
    }

    @Test func errorsComeThroughAsThrown() async {
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await Self.thread.run { () async throws(Refused) -> Int in throw Refused() }
        }
    }
}

/// glibc's pthread_getname_np(3) (a GNU extension the Glibc module does not export).
@_silgen_name("pthread_getname_np")
private func glibcThreadName(_ thread: pthread_t, _ name: UnsafeMutablePointer<CChar>, _ length: Int) -> Int32

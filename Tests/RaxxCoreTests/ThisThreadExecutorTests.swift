import Foundation
import RaxxCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the task saw, written from several threads.
private final class Record: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    private var done = false
    func add(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    func finish() { lock.lock(); done = true; lock.unlock() }
    var finished: Bool { lock.lock(); defer { lock.unlock() }; return done }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}

private func threadID() -> UInt { UInt(pthread_self()) }

/// The executor the offline reads run on: every job of its task runs on the thread that runs it,
/// in order, including after a continuation is resumed from another thread, and child tasks too.
@Suite struct ThisThreadExecutorTests {
    @Test func everyJobRunsOnTheRunningThread() async throws {
        let record = Record()
        _ = await withCheckedContinuation { (outer: CheckedContinuation<UInt, Never>) in
            Thread {
                let me = threadID()
                let executor = ThisThreadExecutor()
                Task(executorPreference: executor) {
                    record.add("start \(threadID() == me)")
                    let value: Int = await withCheckedContinuation { inner in
                        Thread { inner.resume(returning: 42) }.start()
                    }
                    record.add("resumed \(value) \(threadID() == me)")
                    async let child = threadID()
                    let childThread = await child
                    record.add("child \(childThread == me)")
                    record.finish()
                }
                executor.runJobs(until: { record.finished })
                outer.resume(returning: me)
            }.start()
        }
        #expect(record.all == ["start true", "resumed 42 true", "child true"])
    }
}

#if canImport(Testing)
    import Foundation
    import RaxxCore
    import Testing

    /// A trait for tests that block their thread: they wait for tools run as child processes, sleep, or
    /// spin up threads of their own (the end-to-end suites). Swift Testing runs a synchronous test on the
    /// concurrency runtime's thread pool, which is as wide as the machine has cores: two blocked tests
    /// on a 2-core machine left no thread for the in-process sandboxes of the other suites, whose
    /// requests then timed out. With this trait a test runs on one of a few threads kept for blocking
    /// tests (`BlockingLanes`), so it waits without holding up anything else.
    ///
    /// Put it on the suite: `@Suite(.serialized, .blocking)`.
    public struct BlockingTrait: TestTrait, SuiteTrait, TestScoping {
        public var isRecursive: Bool { true }

        /// Only test cases are scoped: a suite's scope would move every test of it, then each case
        /// again, and the suite's own work blocks nothing.
        public func scopeProvider(for test: Test, testCase: Test.Case?) -> BlockingTrait? {
            testCase == nil ? nil : self
        }

        public func provideScope(
            for test: Test, testCase: Test.Case?,
            performing function: @Sendable () async throws -> Void
        ) async throws {
            try await withTaskExecutorPreference(BlockingLanes.shared) {
                try await function()
            }
        }
    }

    extension Trait where Self == BlockingTrait {
        /// Runs each test on a lane for blocking tests, off the concurrency runtime's thread pool.
        public static var blocking: Self { BlockingTrait() }
    }

    /// A few threads of their own (as many as the machine has cores, at least two: as many blocking
    /// tests at a time as before they had lanes), all running the jobs of one `ThisThreadExecutor`:
    /// in the order they came, each to its end, on whichever lane is free.
    public enum BlockingLanes {
        /// How many lanes there are.
        public static let count = max(2, ProcessInfo.processInfo.activeProcessorCount)

        public static let shared: ThisThreadExecutor = {
            let executor = ThisThreadExecutor()
            for _ in 0..<count {
                let thread = Thread {
                    Thread.current.threadDictionary[laneKey] = true
                    executor.runJobs(until: { false })
                }
                thread.stackSize = 8 << 20
                thread.start()
            }
            return executor
        }()

        /// Whether the calling code runs on one of the lanes.
        public static var isCurrent: Bool { Thread.current.threadDictionary[laneKey] as? Bool == true }

        private static let laneKey = "raxx-test-lane"
    }
#endif

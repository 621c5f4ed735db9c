import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What every tool's `main` does: `--version` alone is answered at once, before the argument parser
/// and the concurrency runtime start (a version check in a script or a health probe costs what
/// printing a line costs); anything else runs the command, asynchronously, and exits with its status.
public enum Entrypoint {
    /// The name the process was started by (the last component of argv[0]: the tool, through its
    /// link to raxx-suite).
    public static var invokedName: String {
        guard let first = CommandLine.unsafeArgv[0] else { return "raxx" }
        // strrchr rather than splitting a String: this runs before anything else is set up.
        guard let slash = strrchr(first, 0x2F) else { return String(cString: first) }
        return String(cString: slash + 1)
    }

    public static func run(_ main: @escaping @Sendable () async -> Void) -> Never {
        run(onThisThread: { false }, main)
    }

    /// As `run(_:)`; when `onThisThread()` says so (a read that never waits on anything: the
    /// offline reads), the command's task runs on this thread instead of the concurrency runtime's
    /// thread pool, whose threads cost more to start than such a read costs. The allocator is set
    /// up for `arenas` before any other thread starts.
    public static func run(
        onThisThread: () -> Bool, arenas: ProcessMemory.Arenas = .perThread,
        _ main: @escaping @Sendable () async -> Void
    ) -> Never {
        // From argv itself: even `CommandLine.arguments` costs generic metadata at this point.
        if CommandLine.argc == 2, let argument = CommandLine.unsafeArgv[1], strcmp(argument, "--version") == 0 {
            let line = RaxxVersion.line(tool: invokedName) + "\n"
            _ = line.withCString { write(1, $0, strlen($0)) }
            exit(0)
        }
        ProcessMemory.setUp(arenas)
        if onThisThread() {
            let executor = ThisThreadExecutor()
            Task(executorPreference: executor) {
                await main()
                exit(0)
            }
            executor.runJobs(until: { false })
            exit(0)
        }
        Task {
            await main()
            exit(0)
        }
        dispatchMain()
    }
}

/// A task executor whose jobs all run, in order, on the thread that calls `runJobs(until:)` (or on
/// whichever is free of several that do: the tests' `BlockingLanes`): a task started with it as
/// its preference (and its child tasks) never reaches the thread pool. A job enqueued from another
/// thread (a continuation resumed there) wakes that thread.
// @unchecked: its queue is guarded by an NSCondition, which the running thread waits on.
public final class ThisThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    public init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs jobs as they come until `finished()` (asked after each job, and whenever the queue is
    /// empty) answers true.
    public func runJobs(until finished: () -> Bool) {
        while true {
            condition.lock()
            while jobs.isEmpty {
                if finished() {
                    condition.unlock()
                    return
                }
                condition.wait()
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Wakes the running thread to ask `finished()` again.
    public func wake() {
        condition.lock()
        condition.signal()
        condition.unlock()
    }
}

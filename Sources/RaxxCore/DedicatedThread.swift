#if canImport(Glibc)
    import Glibc
#endif

/// A thread of its own, running the jobs of the tasks `run` hands it: for work that blocks its
/// thread (SQLite's synchronous calls, libcurl's easy interface) and so must not hold one of the
/// concurrency runtime's threads, two on these machines, while it does. Started when made, it
/// waits for jobs as long as the process lives (make one per kind of work, as a `static let`).
/// A POSIX thread, named from within: the name Foundation's `Thread` was given before its start
/// never reached the system (the thread kept its creator's).
// @unchecked: both properties are set once, before any job can run, then only read.
public final class DedicatedThread: @unchecked Sendable {
    private let executor = ThisThreadExecutor()
    private var thread = pthread_t()

    /// What the thread is given to start with.
    private final class Start {
        let executor: ThisThreadExecutor
        let name: String
        init(executor: ThisThreadExecutor, name: String) {
            self.executor = executor
            self.name = name
        }
    }

    /// `name`: what the system shows for the thread (`ps -L`, a debugger), at most 15 bytes (Linux's
    /// limit: a longer one is refused).
    public init(name: String) {
        precondition(name.utf8.count <= 15, "a thread's name is at most 15 bytes")
        let start = Unmanaged.passRetained(Start(executor: executor, name: name)).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                #if os(Linux)
                    _ = glibcSetThreadName(pthread_self(), start.name)
                #endif
                start.executor.runJobs(until: { false })
                return nil
            }, start)
        precondition(created == 0, "the system could not start a thread (\(created))")
        pthread_detach(thread)
    }

    /// Runs `body` (and its child tasks) on the thread. Everything it does there waits its turn on
    /// the one thread; a task it starts with `Task {}` runs elsewhere, as any such task does.
    public func run<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        try await withTaskExecutorPreference(executor) { () async throws(Failure) -> T in try await body() }
    }

    /// Whether the caller runs on this thread.
    public var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }
}

#if os(Linux)
    /// glibc's pthread_setname_np(3), which the Glibc module does not export (a GNU extension).
    @_silgen_name("pthread_setname_np")
    private func glibcSetThreadName(_ thread: pthread_t, _ name: UnsafePointer<CChar>) -> Int32
#endif

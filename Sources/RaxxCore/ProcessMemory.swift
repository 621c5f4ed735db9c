import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How this process's allocator (glibc's malloc) keeps the memory its threads free: chosen once, by
/// the tool's entrypoint, before any other thread allocates (`Entrypoint.run`), and asked by the
/// code that passes megabyte buffers from thread to thread (a refresh's sync pages).
public enum ProcessMemory {
    /// Where freed memory waits for its next use.
    public enum Arenas: Sendable, Equatable {
        /// glibc's default: a thread that allocates while another holds the lock takes an arena of
        /// its own (up to eight a core), and what is freed into an arena waits there for that arena's
        /// next allocations. A buffer filled on one thread and freed on another is not reused by the
        /// next thread that asks, so large ones are better mapped and unmapped each time
        /// (`mapLargeBuffersApart`).
        case perThread
        /// One arena for every thread: what any thread frees is what the next allocation, on any
        /// thread, takes. For a tool whose threads hand each other large buffers in turn, each
        /// allocated on one and freed on another.
        case shared
    }

    private static let sharing = Atomic<Bool>(false)

    /// Sets the allocator up for `arenas`: first thing in the process (an arena a thread has
    /// already taken stays its own).
    static func setUp(_ arenas: Arenas) {
        guard arenas == .shared else { return }
        #if os(Linux)
            _ = glibcMallopt(mArenaMax, 1)
        #endif
        sharing.store(true, ordering: .releasing)
    }

    /// Whether this process's threads share one arena (`Arenas.shared`).
    public static var sharesOneArena: Bool { sharing.load(ordering: .acquiring) }

    /// Buffers of 256 KiB or more get mappings of their own, handed back to the system when freed,
    /// instead of glibc raising its threshold and keeping them in the heap: with an arena per
    /// thread, the freed buffers of several arenas add up to the peak.
    public static func mapLargeBuffersApart() {
        #if os(Linux)
            _ = glibcMallopt(mMmapThreshold, 256 << 10)
        #endif
    }

    /// Hands the free memory at the end of each arena's heap back to the system (malloc_trim).
    public static func releaseFreedMemory() {
        #if os(Linux)
            _ = glibcMallocTrim(0)
        #endif
    }
}

#if os(Linux)
    /// mallopt's parameters, from glibc's <malloc.h>.
    private let mMmapThreshold: Int32 = -3
    private let mArenaMax: Int32 = -8

    /// glibc's malloc_trim(3), which the Glibc module does not export (it lives in <malloc.h>).
    @_silgen_name("malloc_trim")
    private func glibcMallocTrim(_ pad: Int) -> Int32

    /// glibc's mallopt(3), from <malloc.h> too.
    @_silgen_name("mallopt")
    private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif

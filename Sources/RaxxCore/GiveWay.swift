import Foundation

/// For work that keeps a core busy for milliseconds on end (an erasure's chunk in the sandbox, a
/// sync page written into the cache), called between its steps: the thread gives its core to any
/// thread ready to run there, and goes on at once when there is none. Without it, on 2 cores, a
/// thread that wakes for a short job on somebody's critical path (an event loop passing on a
/// request, a transfer's callback) waits for the long work's time slice to run out: up to
/// milliseconds, at each hop. Each caller says what it measured.
public enum GiveWay {
    public static func toReadyThreads() { sched_yield() }
}

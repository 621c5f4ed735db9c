import Foundation
import RaxxCore

/// How an erasure gives way to other accounts' requests: while the sandbox keeps hearing requests
/// (one within `window`), each chunk is followed by `pause`. A chunk holds the write lock about
/// 1 ms, and other writes queue behind it in turn; but chunks run back to back keep a core busy,
/// and on a 2-core machine the requests then wait for the CPU: another account's order p99 rose
/// 2.85x during an erasure; 1.81-1.91x with a 1 ms pause after each chunk while requests came,
/// 1.60x with 2 ms (the sandbox's default), the erasure about as long (42-44 s for a million
/// fills). With nobody else asking, the erasure runs at full speed.
struct ErasureYield: Sendable {
    static let window = Duration.milliseconds(10)
    var pause: Duration
    var othersActive: @Sendable () -> Bool

    init(pause: Duration, othersActive: @escaping @Sendable () -> Bool) {
        self.pause = pause
        self.othersActive = othersActive
    }

    static let never = ErasureYield(pause: .zero) { false }

    /// Called between two steps of a chunk (`ErasureChunkSizing.stepRows` rows, a fraction of a
    /// millisecond each): `GiveWay.toReadyThreads`. A chunk keeps a core busy, and the threads that
    /// serve another account's order (the event loop, the task running the handler, the client
    /// itself on a 2-core machine) otherwise wait for its time slice to run out at each hop of the
    /// request. `Scripts/bench dsr` (release, 2 cores), alternating builds: the other account's
    /// order p99 during the erasure was 2.33-2.61x its p99 without, 1.39-1.77x with this; the
    /// erasure took 1.13-1.26x sqlite3's one-transaction delete, 1.30-1.41x with this, because the
    /// trader's orders, answered sooner, came more often (3,700-3,800 during it against
    /// 2,800-3,100). A lower scheduling priority for the thread (SCHED_IDLE) did about as well, but
    /// a thread of the writer's queue, which runs every other write too, cannot be given its
    /// priority back without privileges.
    static func giveWayToReadyThreads() { GiveWay.toReadyThreads() }

    /// The wait after a chunk: the fixed `pause` between chunks (tests), or this yield's while
    /// others are active, whichever is longer.
    func delay(fixedPause: Duration) -> Duration {
        guard pause > .zero, pause > fixedPause, othersActive() else { return fixedPause }
        return pause
    }
}

/// How many rows an erasure's next chunk takes. Each chunk is a transaction that holds the
/// database's one write lock, and every other account's writes wait behind it: chunks are sized
/// to take about `budget` each (rows that cost more, fewer of them), never more than `maxRows`.
struct ErasureChunkSizing: Sendable {
    /// The rows a chunk deletes in one statement, between which it looks whether another write
    /// waits for the lock (and if so ends). 64 fills take under a millisecond: sqlite3 alone
    /// deletes a million in 7-16 s on these machines.
    static let stepRows = 64
    let maxRows: Int
    let budget: Duration
    private(set) var rows: Int

    init(maxRows: Int, budget: Duration) {
        self.maxRows = max(1, maxRows)
        self.budget = budget
        rows = min(self.maxRows, 500)
    }

    /// A chunk of `rows` rows took `took`: the next one is sized by that pace, changing by at most
    /// a factor of two at a time (one slow chunk, pages read from disk say, does not collapse the size).
    mutating func record(rows done: Int, took: Duration) {
        guard done > 0, took > .zero else { return }
        let wanted = Int(Double(done) * (budget / took))
        rows = min(maxRows, max(50, min(rows * 2, max(rows / 2, wanted))))
    }
}

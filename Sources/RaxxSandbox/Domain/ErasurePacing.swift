import Foundation

/// How an erasure gives way to other accounts' requests between its chunks: while the sandbox
/// keeps hearing requests (one within `window`), each chunk is followed by `pause`
/// (`--erasure-yield`, none by default). When an earlier version's 1 ms chunks ran back to back,
/// another account's order p99 on a 2-core machine rose 2.85x during an erasure; 1.81-1.91x with
/// a 1 ms pause after each chunk while requests came, 1.60x with 2 ms, the erasure about as long
/// (42-44 s for a million fills). Chunks now end after the step in which another write begins to
/// wait, and give the core away after every step (`ErasureChunkSteps`), which did more for the
/// p99 than a pause; the pause stays for an operator who wants the erasure gentler still. With
/// nobody else asking, the erasure runs at full speed.
struct ErasureYield: Sendable {
    static let window = Duration.milliseconds(10)
    var pause: Duration
    var othersActive: @Sendable () -> Bool

    init(pause: Duration, othersActive: @escaping @Sendable () -> Bool) {
        self.pause = pause
        self.othersActive = othersActive
    }

    static let never = ErasureYield(pause: .zero) { false }

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

/// How one chunk of an erasure's history goes through its rows: in steps of at most
/// `ErasureChunkSizing.stepRows` (a statement each), until it has its rows (`limit`), a step finds
/// fewer than it asked for (the table or the trail is through), or another write waits for the lock
/// (`othersWaiting`, asked after each step that leaves the chunk rows to take): another account's
/// order waits for a step, not a whole chunk.
///
/// After each step that found rows (a fraction of a millisecond) the chunk calls `giveWay`,
/// `GiveWay.toReadyThreads` unless a test counts the calls. A chunk keeps a core busy, and the
/// threads that serve another account's order (the event loop, the task running the handler,
/// the client itself on a 2-core machine) otherwise wait for its time slice to run out at each
/// hop of the request.
/// `Scripts/bench dsr` (release, 2 cores), alternating builds: the other account's order p99
/// during the erasure was 2.33-2.61x its p99 without, 1.39-1.77x with this; the erasure took
/// 1.13-1.26x sqlite3's one-transaction delete, 1.30-1.41x with this, because the trader's
/// orders, answered sooner, came more often (3,700-3,800 during it against 2,800-3,100). A lower
/// scheduling priority for the thread (SCHED_IDLE) did about as well, but a thread of the
/// writer's queue, which runs every other write too, cannot be given its priority back without
/// privileges.
enum ErasureChunkSteps {
    /// What a chunk's steps went through.
    struct Outcome: Sendable, Equatable {
        /// The rows its steps found.
        var rows: Int
        /// The last step found fewer rows than it asked for: nothing is left of the table or trail.
        var through: Bool
    }

    /// The steps of a chunk of at most `limit` rows: `step` takes at most the rows it is asked for
    /// and says how many it found. A step that found none gives way too when
    /// `givingWayAfterEmptySteps`: the audit trail's steps give way after every read, a delete that
    /// found nothing (its table already through) has kept the core no time.
    static func run(
        limit: Int, givingWayAfterEmptySteps: Bool, othersWaiting: () -> Bool, giveWay: () -> Void,
        step: (_ rows: Int) throws -> Int
    ) rethrows -> Outcome {
        var rows = 0
        repeat {
            let asked = min(limit - rows, ErasureChunkSizing.stepRows)
            let found = try step(asked)
            rows += found
            if found > 0 || givingWayAfterEmptySteps { giveWay() }
            if found < asked { return Outcome(rows: rows, through: true) }
        } while rows < limit && !othersWaiting()
        return Outcome(rows: rows, through: false)
    }
}

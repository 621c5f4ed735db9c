import GRDB
import Synchronization

/// The database writer as the stores share it: their transactions, counted while they wait for
/// the one write lock. An erasure's chunk holds that lock for a few milliseconds. It stops early
/// when a write is waiting (`waiting.any`), so another account's order waits for one step of a
/// chunk (`ErasureChunkSizing.stepRows`), not the whole chunk.
struct StoreWriter: Sendable {
    let base: any DatabaseWriter
    let waiting: WaitingWrites

    /// One write transaction; counted as waiting from the call until the transaction starts.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let turn = WaitingWrites.Turn(waiting)
        defer { turn.began() }
        return try await base.write { db in
            turn.began()
            return try updates(db)
        }
    }

    /// One read transaction (never counted: reads do not wait for the write lock).
    func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await base.read(value)
    }
}

/// How many of the stores' writes are waiting for the write lock.
final class WaitingWrites: Sendable {
    private let count = Atomic<Int>(0)

    var any: Bool { count.load(ordering: .relaxed) > 0 }

    /// One write's wait: counted from its creation until it `began` (once, however often it is told).
    final class Turn: Sendable {
        private let waiting: WaitingWrites
        private let done = Atomic<Bool>(false)

        init(_ waiting: WaitingWrites) {
            self.waiting = waiting
            waiting.count.add(1, ordering: .relaxed)
        }

        func began() {
            if !done.exchange(true, ordering: .relaxed) { waiting.count.subtract(1, ordering: .relaxed) }
        }
    }
}

import Dispatch
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Checkpoints the sandbox's write-ahead log on a connection and a thread of their own.
///
/// SQLite's automatic checkpoint runs in the connection that commits, right after its commit: on
/// the sandbox's one writer, where every other write waits for it to copy a thousand pages into the
/// database file and sync it (tens of milliseconds on a slow disk, several times a second while an
/// erasure or a seed runs). Installed on the writer, this checkpointer replaces that (a `wal_hook`
/// takes the place of the automatic one): each commit that leaves `threshold` pages or more in the
/// log asks for one passive checkpoint, run here, which never blocks a writer or a reader. Requests
/// that come while one is pending fold into it.
final class WALCheckpointer: Sendable {
    private let path: String
    private let threshold: Int32
    private let queue = DispatchQueue(label: "raxx.sandbox.wal-checkpoint")
    private let pending = Atomic<Bool>(false)
    /// Opened on the first checkpoint, on `queue` only.
    private let connection = Mutex<DatabaseQueue?>(nil)

    /// Pages in the log that call for a checkpoint: 8,000 (32 MiB of 4 KiB pages), where SQLite's
    /// automatic one uses 1,000. An erasure commits a chunk every millisecond or two, and each
    /// commit logs again the index pages it touched (a fill's id, order and time indexes each put
    /// its row on a page of their own): checkpointed every 1,000 pages, the same pages were copied
    /// into the database file, and synced, over and over, on the other core. `Scripts/bench dsr`
    /// (release, 2 cores, another account ordering throughout), 1,000 pages against 8,000: the
    /// erasure 8.47-8.62 s against 7.75-8.09 s (floor 5.4-6.1 s), the other account's p99 during it
    /// 1.53-2.17x against 1.45-1.59x its p99 without; 4,000 and 16,000 pages fell between.
    static let defaultThreshold: Int32 = 8000

    /// - Parameter threshold: pages in the log that call for a checkpoint.
    init(path: String, threshold: Int32 = WALCheckpointer.defaultThreshold) {
        self.path = path
        self.threshold = threshold
    }

    /// Replaces `db`'s automatic checkpoints. The hook's context is this checkpointer, unretained:
    /// whoever installs it keeps it alive as long as `db` (SandboxDatabase does so through the
    /// pool's configuration).
    func install(on db: Database) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_wal_hook(db.sqliteConnection, { context, _, _, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(logPages: pages)
            return SQLITE_OK
        }, context)
    }

    /// A commit left `logPages` pages in the log.
    func committed(logPages: Int32) {
        guard logPages >= threshold, !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            pending.store(false, ordering: .releasing)
            _ = try? checkpoint()
        }
    }

    /// One passive checkpoint now, on this checkpointer's connection: answers the log's frames and
    /// how many of them are in the database file.
    @discardableResult
    func checkpoint() throws -> (walFrameCount: Int, checkpointedFrameCount: Int) {
        try connection.withLock { connection in
            let open: DatabaseQueue
            if let connection {
                open = connection
            } else {
                var config = Configuration()
                config.label = "wal-checkpoint"
                open = try DatabaseQueue(path: path, configuration: config)
                connection = open
            }
            return try open.writeWithoutTransaction { try $0.checkpoint(.passive) }
        }
    }
}

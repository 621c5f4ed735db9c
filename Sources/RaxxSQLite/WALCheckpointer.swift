import Dispatch
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// Checkpoints a database's write-ahead log on a connection and a thread of their own.
///
/// SQLite's automatic checkpoint runs in the connection that commits, right after its commit: on
/// the one writer, where every other write waits for it to copy a thousand pages into the database
/// file and sync it (tens of milliseconds on a slow disk, several times a second while the
/// sandbox erases or seeds, or a refresh fills the cache). Installed on the writer, this
/// checkpointer replaces that (a `wal_hook` takes the place of the automatic one): each commit that
/// leaves `threshold` pages or more in the log asks for one passive checkpoint, run here, which
/// never blocks a writer or a reader. Requests that come while one is pending fold into it.
public final class WALCheckpointer: Sendable {
    private let path: String
    private let threshold: Int32
    private let queue = DispatchQueue(label: "raxx.wal-checkpoint")
    private let pending = Atomic<Bool>(false)
    /// Opened on the first checkpoint, on `queue` only.
    private let connection = Mutex<DatabaseQueue?>(nil)

    /// SQLite's own threshold for its automatic checkpoints (SQLITE_DEFAULT_WAL_AUTOCHECKPOINT).
    public static let sqliteDefaultThreshold: Int32 = 1000

    /// - Parameter threshold: pages in the log that call for a checkpoint.
    public init(path: String, threshold: Int32) {
        self.path = path
        self.threshold = threshold
    }

    /// Replaces `db`'s automatic checkpoints (a connection that writes; a read-only one is left as
    /// it is). The hook's context is this checkpointer, unretained:
    /// whoever installs it keeps it alive as long as `db` (a pool's configuration does, when its
    /// `prepareDatabase` holds the checkpointer).
    public func install(on db: Database) {
        // A reader never commits: nothing to hook.
        guard !db.configuration.readonly else { return }
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_wal_hook(
            db.sqliteConnection,
            { context, _, _, pages in
                guard let context else { return SQLITE_OK }
                Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(logPages: pages)
                return SQLITE_OK
            }, context)
    }

    /// A commit left `logPages` pages in the log: answers whether that asked for a checkpoint (one
    /// already pending takes the request in).
    @discardableResult
    func committed(logPages: Int32) -> Bool {
        guard logPages >= threshold, !pending.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        queue.async { [self] in
            pending.store(false, ordering: .releasing)
            _ = try? checkpoint()
        }
        return true
    }

    /// One passive checkpoint now, on this checkpointer's connection: answers the log's frames and
    /// how many of them are in the database file.
    @discardableResult
    public func checkpoint() throws -> (walFrameCount: Int, checkpointedFrameCount: Int) {
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

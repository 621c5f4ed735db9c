import Foundation
import GRDB
import RaxxTestSupport
import Testing

@testable import RaxxSQLite
@testable import RaxxSandbox

/// The sandbox's one writer never stops to checkpoint the write-ahead log (every other account's
/// writes would wait behind it); the log is still checkpointed, by a connection of its own.
@Suite struct WALCheckpointerTests {
    func temporaryDatabasePath() throws -> (folder: URL, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wal-checkpointer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder, folder.appendingPathComponent("sandbox.sqlite").path)
    }

    @Test func theWriterLeavesCheckpointsToTheCheckpointerWhichKeepsUp() async throws {
        let (folder, path) = try temporaryDatabasePath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try SandboxDatabase(path: path)
        // SQLite's automatic checkpoint (which would run on the writer, after its commits) is off.
        let automatic = try await database.writer.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") }
        #expect(automatic == 0)

        let before = fileSize(path)
        // A checkpoint's worth of log and a quarter more, in commits of 128 KiB (32 pages of 4 KiB).
        let commits = Int(SandboxDatabase.checkpointThreshold) * 5 / 4 / 32
        try await database.writer.write { try $0.execute(sql: "CREATE TABLE scratch (b BLOB)") }
        for _ in 0..<commits {
            try await database.writer.write { try $0.execute(sql: "INSERT INTO scratch (b) VALUES (zeroblob(131072))") }
        }
        // Only a checkpoint moves pages from the log into the database file.
        try await waitUntil { fileSize(path) - before >= 4 << 20 }
        #expect(fileSize(path) - before >= 4 << 20, "the log was not checkpointed into the database file")
        // And the writer goes on writing (a checkpoint never blocks it).
        let rows = try await database.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM scratch") }
        #expect(rows == commits)
    }

    /// Every connection, the writer's and the readers', reads the file through a memory map.
    @Test func theSandboxReadsItsFileThroughAMemoryMap() async throws {
        let (folder, path) = try temporaryDatabasePath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try SandboxDatabase(path: path)
        let writer = try await database.writer.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA mmap_size") }
        let reader = try await database.writer.read { try Int.fetchOne($0, sql: "PRAGMA mmap_size") }
        #expect(writer == SandboxDatabase.memoryMapSize)
        #expect(reader == SandboxDatabase.memoryMapSize)
    }

    @Test func requestsBelowTheThresholdCheckpointNothing() throws {
        let (folder, path) = try temporaryDatabasePath()
        defer { try? FileManager.default.removeItem(at: folder) }
        let checkpointer = WALCheckpointer(path: path, threshold: 1000)
        // Nothing was asked of the checkpointer's thread, and nothing was opened: the database
        // file was never created.
        #expect(!checkpointer.committed(logPages: 999))
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

import Foundation
import GRDB
import RaxxCore
import RaxxTestSupport
import Testing

@testable import RaxxStore

/// Opening a store again in a process that has it open must not drop that process's SQLite locks
/// (closing any descriptor of a file drops every POSIX lock the process holds on it): another
/// process closing the database last would then delete the log the first connection still writes.
@Suite(.blocking) struct StoreLockTests {
    /// Runs `sql` in another process (python3's sqlite3, on the system's SQLite) and answers the
    /// first column of its first row; the connection is closed before the process ends.
    func elsewhere(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute(sys.argv[2]).fetchone()[0]); c.close()",
            path, sql,
        ]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func openingAStoreAgainKeepsTheFirstConnectionsCommitsVisible() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-locks-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("orders.sqlite")
        let journal = try OrderJournal.open(at: url, in: PrivateFolders(roots: [folder.path]))
        try journal.writer.write { db in
            try db.execute(sql: "CREATE TABLE probe (x INTEGER)")
            try db.execute(sql: "INSERT INTO probe VALUES (1)")
        }
        _ = try OrderJournal.open(at: url, in: PrivateFolders(roots: [folder.path]))  // as raxx-order place does, for the dead man's switch
        #expect(try elsewhere(url.path, "SELECT COUNT(*) FROM probe") == "1")
        try journal.writer.write { db in try db.execute(sql: "INSERT INTO probe VALUES (2)") }
        // Another process sees the second commit: the log it went to is still the database's.
        #expect(try elsewhere(url.path, "SELECT COUNT(*) FROM probe") == "2")
    }
}

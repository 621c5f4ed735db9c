import Foundation
import RaxxCore
import Testing

@Suite struct LocalAccountsTests {
    final class Home: @unchecked Sendable {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-accounts-\(UUID().uuidString)")
        deinit { try? FileManager.default.removeItem(at: root) }

        var configuration: RaxxConfiguration {
            get throws { try RaxxConfiguration(environment: ["RAXX_HOME": root.path, "RAXX_API_URL": "http://127.0.0.1:8080"]) }
        }

        func write(_ path: String, _ text: String = "x") throws {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: false, encoding: .utf8)
        }

        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
    }

    @Test func anAccountIDIsAlwaysOneFolderOfItsOwn() {
        #expect(AccountFolders.folderName("acc_42-x") == "acc_42-x")
        #expect(AccountFolders.folderName(".") == "%2E")
        #expect(AccountFolders.folderName("..") == "%2E%2E")
        #expect(AccountFolders.folderName("../../etc") == "%2E%2E%2F%2E%2E%2Fetc")
        #expect(AccountFolders.folderName("") == "%")
        #expect(AccountFolders.folderName("é") == "%C3%A9")
        // Two IDs never share one: the escape character is escaped itself.
        #expect(AccountFolders.folderName("%2E") != AccountFolders.folderName("."))
        let long = AccountFolders.folderName(String(repeating: "a", count: 300))
        #expect(long.hasPrefix("sha256-") && long.count == 7 + 64)
        #expect(long != AccountFolders.folderName(String(repeating: "a", count: 301)))
    }

    @Test func eachAccountHasItsOwnFoldersAndForgettingOneLeavesTheOthers() throws {
        let home = Home()
        let folders = AccountFolders(try home.configuration)
        let accounts = FileLocalAccounts(try home.configuration)
        #expect(try accounts.current() == nil)
        try accounts.adopt("acc_a", sessionKeptFromBefore: false)
        #expect(try accounts.current() == "acc_a")
        try home.write(folders.statePath("acc_a") + "/alerts.sqlite")
        try home.write(folders.cachePath("acc_a") + "/cache.sqlite")
        try accounts.adopt("acc_b", sessionKeptFromBefore: false)
        #expect(try accounts.current() == "acc_b")
        try home.write(folders.statePath("acc_b") + "/alerts.sqlite")
        #expect(folders.statePath("acc_a") != folders.statePath("acc_b"))
        try accounts.forget("acc_a")
        #expect(!home.exists(folders.statePath("acc_a")) && !home.exists(folders.cachePath("acc_a")))
        #expect(home.exists(folders.statePath("acc_b") + "/alerts.sqlite"))
        #expect(try accounts.current() == "acc_b")  // another account's forgetting leaves the current one
        try accounts.forget("acc_b")
        #expect(try accounts.current() == nil)
        #expect(!home.exists(folders.markerPath))
        let mode = try FileManager.default.attributesOfItem(atPath: folders.stateServerPath)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    /// The marker's stamp is its modification time; confirming it moves the stamp on (the next run
    /// trusts the marker over a keystore that changed before).
    @Test func theMarkerIsStampedAndConfirmed() throws {
        let home = Home()
        let folders = AccountFolders(try home.configuration)
        let accounts = FileLocalAccounts(try home.configuration)
        #expect(try accounts.marked() == nil)
        accounts.confirm()  // nothing to confirm: no marker appears
        #expect(!home.exists(folders.markerPath))
        try accounts.adopt("acc_a", sessionKeptFromBefore: false)
        let old = timespec(tv_sec: 1_000_000_000, tv_nsec: 0)
        #expect(utimensat(AT_FDCWD, folders.markerPath, [old, old], 0) == 0)
        let marked = try #require(try accounts.marked())
        #expect(marked.account == "acc_a" && marked.at == ChangeStamp(seconds: 1_000_000_000, nanoseconds: 0))
        #expect(ChangeStamp.ofFile(folders.markerPath) == marked.at)
        accounts.confirm()
        let confirmed = try #require(try accounts.marked())
        #expect(confirmed.account == "acc_a" && confirmed.at > marked.at)
    }

    /// After an upgrade: the session the device already held takes over everything kept per
    /// server, its alerts and watch's cursor too (a watch feeding a push pipeline goes on where it
    /// was, rather than replaying every alert); a new sign-in takes over the journal and cache
    /// (which check each row's account) but not the alerts, which name no account.
    @Test(arguments: [true, false])
    func theFirstAccountTakesOverWhatWasKeptPerServer(sessionKeptFromBefore: Bool) throws {
        let home = Home()
        let folders = AccountFolders(try home.configuration)
        for suffix in ["", "-wal"] {
            try home.write(folders.stateServerPath + "/orders.sqlite" + suffix, "journal" + suffix)
            try home.write(folders.cacheServerPath + "/cache.sqlite" + suffix, "cache" + suffix)
            try home.write(folders.stateServerPath + "/alerts.sqlite" + suffix, "alerts" + suffix)
        }
        let accounts = FileLocalAccounts(try home.configuration)
        try accounts.adopt("acc_a", sessionKeptFromBefore: sessionKeptFromBefore)
        #expect(try String(contentsOfFile: folders.statePath("acc_a") + "/orders.sqlite", encoding: .utf8) == "journal")
        #expect(try String(contentsOfFile: folders.statePath("acc_a") + "/orders.sqlite-wal", encoding: .utf8) == "journal-wal")
        #expect(try String(contentsOfFile: folders.cachePath("acc_a") + "/cache.sqlite", encoding: .utf8) == "cache")
        for gone in ["/orders.sqlite", "/alerts.sqlite", "/alerts.sqlite-wal"] { #expect(!home.exists(folders.stateServerPath + gone), "\(gone)") }
        #expect(!home.exists(folders.cacheServerPath + "/cache.sqlite"))
        #expect(home.exists(folders.statePath("acc_a") + "/alerts.sqlite") == sessionKeptFromBefore)
        // Only the first account ever adopted: a later one starts empty.
        try home.write(folders.stateServerPath + "/orders.sqlite", "late")
        try accounts.adopt("acc_b", sessionKeptFromBefore: true)
        #expect(!home.exists(folders.statePath("acc_b") + "/orders.sqlite"))
    }

    @Test func theMarkerIsReadAsWrittenAndIsPrivate() throws {
        let home = Home()
        let accounts = FileLocalAccounts(try home.configuration)
        try accounts.adopt("acc_x", sessionKeptFromBefore: false)
        let marker = AccountFolders(try home.configuration).markerPath
        #expect(try String(contentsOfFile: marker, encoding: .utf8) == "acc_x\n")
        #expect(try FileManager.default.attributesOfItem(atPath: marker)[.posixPermissions] as? Int == 0o600)
    }
}

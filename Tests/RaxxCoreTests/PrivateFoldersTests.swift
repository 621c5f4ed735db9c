import Foundation
import RaxxCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The rule on the tools' folders, tried as another local user would try it: a folder they may
/// write, a link planted where a folder or a file goes, a link left for a removal to follow.
@Suite struct PrivateFoldersTests {
    /// A root of the test's own (`home`), and a folder beside it playing another user's
    /// (`outside`), both removed when the test is done.
    final class Sandbox {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-private-\(UUID().uuidString)").path
        var home: String { base + "/home" }
        var outside: String { base + "/outside" }
        var folders: PrivateFolders { PrivateFolders(roots: [home]) }

        init() throws {
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }

        deinit { try? FileManager.default.removeItem(atPath: base) }

        /// A link planted at `path` (its folders in `home` made as the tools make them).
        func link(_ path: String, to target: String) throws {
            try folders.folder((path as NSString).deletingLastPathComponent)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        }

        func exists(_ path: String) -> Bool {
            var info = stat()
            return lstat(path, &info) == 0
        }

        func contents(_ path: String) -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: path).sorted()) ?? [] }
    }

    func refusal(_ body: () throws(RaxxError) -> Void) -> RaxxError? {
        do { try body(); return nil } catch { return error }
    }

    @Test func foldersAreMadePrivateFromTheRootDown() throws {
        let sandbox = try Sandbox()
        let path = sandbox.home + "/cache/api.raxx.app/accounts/acc_1"
        #expect(try !sandbox.folders.folder(path, create: false))  // a read makes nothing
        #expect(!sandbox.exists(sandbox.home + "/cache"))
        #expect(try sandbox.folders.folder(path))
        for folder in ["/cache", "/cache/api.raxx.app", "/cache/api.raxx.app/accounts", "/cache/api.raxx.app/accounts/acc_1"] {
            let mode = try FileManager.default.attributesOfItem(atPath: sandbox.home + folder)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(folder)")
        }
    }

    @Test func aFolderOthersMayWriteIsRefusedWithTheChmodThatFixesIt() throws {
        let sandbox = try Sandbox()
        let cache = sandbox.home + "/cache"
        try sandbox.folders.folder(cache + "/api.raxx.app")
        chmod(cache, 0o775)
        chown(cache, geteuid(), 1)  // a group others are in (daemon), not the user's own
        let refused = try #require(refusal { () throws(RaxxError) in try sandbox.folders.folder(cache + "/api.raxx.app/accounts") })
        #expect(refused.status == .notPermitted)
        #expect(refused.code == "unsafe_folder")
        #expect(refused.message == "\(cache) can be written by other users; refusing to use it.")
        #expect(refused.hint == "Fix it with: chmod go-w \(cache)")
        #expect(!sandbox.exists(cache + "/api.raxx.app/accounts"))  // nothing made past it
        // The root itself is held to the rule too (RAXX_HOME world-writable).
        chmod(cache, 0o700)
        chmod(sandbox.home, 0o777)
        let root = try #require(refusal { () throws(RaxxError) in try sandbox.folders.folder(cache) })
        #expect(root.hint == "Fix it with: chmod go-w \(sandbox.home)")
        chmod(sandbox.home, 0o700)
        #expect(try sandbox.folders.folder(cache + "/api.raxx.app/accounts"))
    }

    /// Group-writable by the user's private group (umask 002, a group of one's own) is the user's
    /// alone, as Debian's OpenSSH takes it; world-writable never is.
    @Test func theUsersOwnGroupMayWriteNoOneElse() throws {
        let sandbox = try Sandbox()
        let cache = sandbox.home + "/cache"
        try sandbox.folders.folder(cache)
        guard PrivateFolders.isPrivateGroup(getegid()) else { return }  // a machine whose group is shared: nothing to show
        chown(cache, geteuid(), getegid())
        chmod(cache, 0o775)
        #expect(try sandbox.folders.folder(cache + "/api.raxx.app"))
        chmod(cache, 0o777)
        #expect(refusal { () throws(RaxxError) in try sandbox.folders.folder(cache + "/api.raxx.app") }?.code == "unsafe_folder")
    }

    /// `cache/<server>/accounts` planted as a link to another user's folder: never followed,
    /// neither to make the account's folder there nor to read what is there.
    @Test func aLinkAnywhereBelowTheRootIsRefusedAndNothingIsMadeThroughIt() throws {
        let sandbox = try Sandbox()
        let accounts = sandbox.home + "/cache/api.raxx.app/accounts"
        try sandbox.link(accounts, to: sandbox.outside)
        let refused = try #require(refusal { () throws(RaxxError) in try sandbox.folders.folder(accounts + "/acc_1") })
        #expect(refused.status == .notPermitted)
        #expect(refused.message == "\(accounts) is a symbolic link; refusing to follow it.")
        #expect(refused.hint?.contains("rm \(accounts)") == true)
        #expect(sandbox.contents(sandbox.outside).isEmpty)
        // Nor for a read: a link is refused, not taken for "nothing here".
        #expect(refusal { () throws(RaxxError) in _ = try sandbox.folders.open(accounts + "/acc_1/cache.sqlite", O_RDONLY) }?.code == "unsafe_folder")
    }

    /// A link at a file's name (a database, a lock, a marker) pointing outside: refused, and the
    /// file it names is neither made, opened nor chmodded.
    @Test func aLinkAtAFilesNameIsRefusedAndWhatItPointsToIsUntouched() throws {
        let sandbox = try Sandbox()
        let folder = sandbox.home + "/state/api.raxx.app"
        try sandbox.folders.folder(folder)
        let victim = sandbox.outside + "/planted.sqlite"
        FileManager.default.createFile(atPath: victim, contents: Data("theirs".utf8), attributes: [.posixPermissions: 0o644])
        try sandbox.link(folder + "/orders.sqlite", to: victim)
        try sandbox.link(folder + "/orders.lock", to: sandbox.outside + "/made-through-a-link")
        for name in ["orders.sqlite", "orders.lock"] {
            let refused = try #require(refusal { () throws(RaxxError) in _ = try sandbox.folders.open(folder + "/" + name, O_RDWR | O_CREAT) })
            #expect(refused.status == .notPermitted && refused.code == "unsafe_folder", "\(name)")
            #expect(refused.message == "\(folder)/\(name) is a symbolic link; refusing to follow it.")
        }
        #expect(refusal { () throws(RaxxError) in try PrivateFolders.refuseLink(atFile: folder + "/orders.sqlite") } != nil)
        #expect(refusal { () throws(RaxxError) in try PrivateFolders.narrow(folder + "/orders.sqlite") } != nil)
        #expect(sandbox.contents(sandbox.outside) == ["planted.sqlite"])
        #expect(try FileManager.default.attributesOfItem(atPath: victim)[.posixPermissions] as? Int == 0o644)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "theirs")
    }

    @Test func aFileIsOpenedPrivateWhateverItsModeWas() throws {
        let sandbox = try Sandbox()
        let path = sandbox.home + "/cache/refresh.lock"
        let fd = try #require(try sandbox.folders.open(path, O_RDWR | O_CREAT))
        close(fd)
        chmod(path, 0o644)
        let again = try #require(try sandbox.folders.open(path, O_RDWR))
        close(again)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try sandbox.folders.open(sandbox.home + "/cache/missing", O_RDONLY) == nil)
    }

    /// A removal takes a planted link away, never what it points to, and never walks through a
    /// link inside the folder it removes.
    @Test func aRemovalRemovesAPlantedLinkButNotWhatItPointsTo() throws {
        let sandbox = try Sandbox()
        let keep = sandbox.outside + "/keep"
        try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: keep + "/precious", contents: Data("mine".utf8))
        // The account's folder itself is a link…
        let linked = sandbox.home + "/state/api.raxx.app/accounts/acc_1"
        try sandbox.link(linked, to: keep)
        try sandbox.folders.remove(linked)
        #expect(!sandbox.exists(linked))
        // …or a real folder with a link inside it.
        let real = sandbox.home + "/cache/api.raxx.app/accounts/acc_1"
        try sandbox.folders.folder(real + "/deeper")
        FileManager.default.createFile(atPath: real + "/deeper/cache.sqlite", contents: Data("x".utf8))
        try sandbox.link(real + "/deeper/escape", to: keep)
        try sandbox.link(real + "/file-link", to: keep + "/precious")
        try sandbox.folders.remove(real)
        #expect(!sandbox.exists(real))
        #expect(sandbox.contents(keep) == ["precious"])
        #expect(try String(contentsOfFile: keep + "/precious", encoding: .utf8) == "mine")
        try sandbox.folders.remove(real)  // nothing there: nothing to do
    }

    /// Under a folder planted as a link, a removal refuses rather than follow it to the folder it
    /// was asked to remove.
    @Test func aRemovalNeverGoesThroughALinkAboveIt() throws {
        let sandbox = try Sandbox()
        let keep = sandbox.outside + "/accounts/acc_1"
        try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        try sandbox.link(sandbox.home + "/cache/api.raxx.app/accounts", to: sandbox.outside + "/accounts")
        let refused = refusal { () throws(RaxxError) in try sandbox.folders.remove(sandbox.home + "/cache/api.raxx.app/accounts/acc_1") }
        #expect(refused?.code == "unsafe_folder")
        #expect(sandbox.exists(keep))
    }

    /// `logout --forget-device` and an erased account's clean-up: the account's folder planted
    /// as a link to a folder of the user's elsewhere, which must survive.
    @Test func forgettingAnAccountRemovesAPlantedLinkNotWhatItPointsTo() throws {
        let sandbox = try Sandbox()
        let configuration = try RaxxConfiguration(environment: ["RAXX_HOME": sandbox.home, "RAXX_API_URL": "http://127.0.0.1:8080"])
        let accounts = FileLocalAccounts(configuration)
        try accounts.adopt("acc_a", sessionKeptFromBefore: false)
        let keep = sandbox.outside + "/keep"
        try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: keep + "/precious", contents: Data("mine".utf8))
        let cache = AccountFolders(configuration).cachePath("acc_a")
        try sandbox.link(cache, to: keep)
        try accounts.forget("acc_a")
        #expect(!sandbox.exists(cache))
        #expect(sandbox.contents(keep) == ["precious"])
        #expect(try accounts.current() == nil)
    }

    @Test func aPathOutsideTheRootsIsNeverTouched() throws {
        let sandbox = try Sandbox()
        #expect(refusal { () throws(RaxxError) in try sandbox.folders.folder(sandbox.outside + "/x") }?.code == "internal")
        #expect(refusal { () throws(RaxxError) in try sandbox.folders.folder(sandbox.home + "/../outside/x") }?.code == "internal")
        #expect(!sandbox.exists(sandbox.outside + "/x"))
    }

    @Test func theRootsAreRaxxHomeOrTheXDGFolders() throws {
        #expect(try RaxxConfiguration(environment: ["RAXX_HOME": "/r/"]).privateRootPaths == ["/r"])
        #expect(try RaxxConfiguration(environment: ["HOME": "/h"]).privateRootPaths == ["/h/.local/state", "/h/.cache"])
        #expect(try RaxxConfiguration(environment: ["HOME": "/h", "XDG_STATE_HOME": "/s", "XDG_CACHE_HOME": "/c"]).privateRootPaths == ["/s", "/c"])
    }
}

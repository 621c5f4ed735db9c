import Crypto
import Foundation
import RaxxCore
import RaxxTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The hardening review's findings, each tried as an attacker or an unlucky user would, against
/// real tools and a sandbox.
@Suite(.serialized, .blocking) struct HardeningEndToEndTests {
    // MARK: Sessions belong to the server that issued them

    @Test func tokensGoOnlyToTheServerThatIssuedThem() throws {
        let home = try CacheHome(positions: 5, fills: 20)
        // Anything listening on another loopback port: a mistyped URL, a second sandbox, an attacker.
        let other = try LoopbackListener(.respond(status: 200, headers: ["Content-Type": "application/json"], body: "{}"))
        defer { other.stop() }
        let elsewhere = ["RAXX_API_URL": other.url]
        let whoami = try ToolRunner.run("raxx-auth", ["whoami", "--format", "text"], environment: home.environment.merging(elsewhere) { _, b in b })
        #expect(whoami.status == 4)
        #expect(whoami.stderr == "raxx-auth: Not signed in to \(other.url): raxx-auth login\n")
        #expect(try home.cache(["refresh"], environment: elsewhere).status == 4)
        let list = try ToolRunner.run("raxx-order", ["list"], environment: home.environment.merging(elsewhere) { _, b in b })
        #expect(list.status == 4)
        #expect(other.connections == 0, "another server was contacted")
        #expect(!other.requests.contains { $0.lowercased().contains("authorization") })
        // The first server's session is intact, and status lists both.
        #expect(try ToolRunner.run("raxx-auth", ["whoami"], environment: home.environment).status == 0)
        let status = try ToolRunner.run("raxx-auth", ["status"], environment: home.environment.merging(elsewhere) { _, b in b })
        #expect(status.status == 4)
        let records = home.lines(status.stdout)
        #expect(records.map { $0["server"] as? String } == [other.url, home.sandbox?.url])
        #expect(records.map { $0["signed_in"] as? Bool } == [false, true])
    }

    /// A proxy in the environment never sees a loopback server's tokens, however the URL's scheme
    /// and host are written: the endpoint is normalised once, and the proxy rule reads that form.
    @Test func aProxyNeverSeesLoopbackTokensWhateverTheURLsCase() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "proxy@example.com"], pin: "246813").status == 0)
        let proxy = try LoopbackListener(.respond(status: 200, headers: ["Content-Type": "application/json"], body: "{}"))
        defer { proxy.stop() }
        let port = home.sandbox.url.split(separator: ":").last.map(String.init) ?? ""
        for url in ["HTTP://127.0.0.1:\(port)", "Http://127.0.0.1:\(port)/", "hTTp://127.0.0.1:\(port)"] {
            let through = ["RAXX_API_URL": url, "http_proxy": proxy.url, "HTTP_PROXY": proxy.url, "ALL_PROXY": proxy.url, "all_proxy": proxy.url]
            let whoami = try home.auth(["whoami"], environment: through)
            #expect(whoami.status == 0, "\(url): \(whoami.stderr)")
            #expect(home.json(whoami.stdout)["account"] as? String == "proxy@example.com", "\(url): \(whoami.stdout)")
        }
        #expect(proxy.connections == 0, "the proxy was contacted: \(proxy.requests)")
        #expect(!proxy.requests.contains { $0.lowercased().contains("authorization") })
    }

    /// The sandbox's database holds the receipt-signing and pseudonym keys, and its push log device
    /// tokens: under a usual umask they were 0644, and any local user forged receipts that
    /// verified. Every file it writes is 0600, an older world-readable one narrowed.
    @Test func theSandboxsFilesArePrivateWhateverTheUmask() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-e2e-modes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "0123456789abcdef0123456789abcdef\n".write(to: folder.appendingPathComponent("machine-id"), atomically: true, encoding: .utf8)
        let previous = umask(0o022)
        defer { umask(previous) }
        func mode(_ path: String) -> mode_t? {
            var info = stat()
            return stat(path, &info) == 0 ? info.st_mode & 0o777 : nil
        }
        let database = folder.appendingPathComponent("sandbox.sqlite").path
        let seed = try ToolRunner.run("raxx-sandbox", ["seed", "--db", database, "--email", "modes@example.com", "--positions", "2", "--fills", "5"])
        #expect(seed.status == 0, "\(seed.stderr)")
        #expect(mode(database) == 0o600)
        // As an older sandbox left it: world-readable, with its logs.
        for suffix in ["", "-wal", "-shm"] where mode(database + suffix) != nil { chmod(database + suffix, 0o644) }
        let sandbox = try SandboxProcess(database: database)
        let register = try sandbox.register(
            "other@example.com", pin: "246813",
            environment: [
                "RAXX_HOME": folder.appendingPathComponent("home").path, "RAXX_API_URL": sandbox.url,
                "RAXX_MACHINE_ID_FILE": folder.appendingPathComponent("machine-id").path,
            ])
        #expect(register.status == 0, "\(register.stderr)")
        #expect(mode(database + "-wal") == 0o600, "the write-ahead log, written while serving")
        #expect(mode(database + "-shm") == 0o600)
        sandbox.stop()
        #expect(mode(database) == 0o600)

        let key = P256.Signing.PrivateKey()
        let endpoint = try APNsEndpointProcess(keyID: "KEY1234567", teamID: "TEAM123456", publicKeyPEM: key.publicKey.pemRepresentation)
        defer { endpoint.stop() }
        #expect(mode(endpoint.logFile) == 0o600, "the push log holds device tokens")
    }

    @Test func eachServerHasItsOwnCache() throws {
        let home = try CacheHome(positions: 5, fills: 20)
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        let other = try LoopbackListener(.refuse)
        let elsewhere = try home.cache(["show", "positions", "--format", "text"], environment: ["RAXX_API_URL": other.url])
        #expect(elsewhere.status == 3)
        #expect(elsewhere.stderr.contains("No cached data yet"))
        let back = try home.cache(["show", "positions"])
        #expect(back.status == 0)
        #expect(home.lines(back.stdout).count == 5)
    }

    @Test func aServerAskingForAnotherSitesPasskeyIsRefused() throws {
        let home = try AuthHome(sandboxArguments: ["--rp-id", "raxx.app", "--origin", "https://raxx.app"])
        let register = try home.auth(["register", "--email", "t@example.com", "--format", "text"], pin: "246813")
        #expect(register.status == 77)
        #expect(register.stderr.contains("asked for a passkey of raxx.app"))
        let status = try home.auth(["status"])
        #expect(home.json(status.stdout)["passkey"] as? Bool == false)
    }

    // MARK: Renewal

    @Test func parallelRenewalsNeverEndALiveSession() throws {
        let home = try CacheHome(positions: 3, fills: 10, sandboxArguments: ["--token-ttl", "3s"])
        for round in 1...3 {
            #expect(try ToolRunner.waitUntil(.accessToken, environment: home.environment))  // the access token has lapsed
            let runs: [(String, [String])] = Array(repeating: ("raxx-auth", ["whoami"]), count: 6) + Array(repeating: ("raxx-order", ["list"]), count: 2)
            let statuses = Outcomes()
            // All eight at once, as overlapping cron jobs start (one thread each: not limited to the cores).
            let done = DispatchGroup()
            for (tool, arguments) in runs {
                done.enter()
                Thread {
                    let r = try? ToolRunner.run(tool, arguments, environment: home.environment)
                    statuses.append((tool, r?.status ?? -1, r?.stderr ?? "did not run"))
                    done.leave()
                }.start()
            }
            done.wait()
            for (tool, status, stderr) in statuses.all {
                #expect(status == 0, "round \(round): \(tool) exited \(status): \(stderr)")
            }
        }
    }

    @Test func anExpiredTokenAndAHangingServerIsOfflineNotBusy() throws {
        let home = try CacheHome(positions: 3, fills: 10, sandboxArguments: ["--token-ttl", "3s"])
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        #expect(try ToolRunner.waitUntil(.accessToken, environment: home.environment))
        let sandbox = try #require(home.sandbox)
        sandbox.suspend()
        defer { sandbox.resume() }
        let r = try home.cache(["refresh", "--format", "text"], environment: ["RAXX_TIMEOUT": "11s"])
        #expect(r.status == 69, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("raxx-cache: This action requires an internet connection. Try again when online."))
    }

    // MARK: Every answer has a ceiling

    /// The server at the session's origin answers a sync page of 64 MB of valid-looking JSON,
    /// streamed with a Content-Length and then chunked: each refresh stops reading it, exits 69
    /// saying the answer was too large, writes nothing, and the cache is as it was.
    @Test func aSyncPageTooLargeToReadLeavesTheCacheAsItWas() throws {
        let home = try CacheHome(positions: 5, fills: 20, proxied: true)
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        let positions = try home.cache(["show", "positions"])
        #expect(home.lines(positions.stdout).count == 5)
        let status = try home.cache(["status"])
        // The sandbox goes; a server that answers every request with a page too large takes its address.
        let proxy = try #require(home.proxy)
        proxy.stop()
        let change =
            #"""
            {"entity":"position","id":"pos_huge","op":"upsert","position":{"avg_price":"1.00","id":"pos_huge","qty":1,"symbol":"HUGE",\#
            "updated_at":"2026-01-02T03:04:05Z"},"seq":2}
            """#
        let page = LoopbackListener.StreamedBody(
            head: #"{"as_of":"2026-01-02T03:04:05Z","cursor":999999,"has_more":false,"reset":false,"changes":["#,
            filler: change + ",", tail: change + "]}")
        let size = 64_000_000
        for chunked in [false, true] {
            let server = try LoopbackListener(
                .stream(status: 200, headers: ["Content-Type": "application/json"], body: page, bytes: size, chunked: chunked),
                port: proxy.port)
            let r = try home.cache(["refresh", "--format", "text"])
            #expect(r.status == 69, "chunked \(chunked): \(r.stderr)")
            #expect(r.stderr.hasPrefix("raxx-cache: The server's answer was too large to read.\n"), "chunked \(chunked): \(r.stderr)")
            #expect(r.stdout.isEmpty)
            #expect(server.requests.contains { $0.hasPrefix("GET /api/sync?") }, "\(server.requests)")
            // The tool has exited: every answer it was sent has ended, none of them sent whole.
            #expect(ToolRunner.waitUntil(timeout: 60) { server.streamsEnded == server.requests.count })
            #expect(server.streamedBytes < size * server.requests.count)
            server.stop()
        }
        let after = try home.cache(["show", "positions"])
        #expect(after.status == 0)
        #expect(after.stdout == positions.stdout)
        // The same rows, cursor and last success; the failure is recorded as the refresh's last error.
        let statusAfter = try home.cache(["status"])
        let rows = { (text: String) in
            home.lines(text).map { record in ["entity", "rows", "cursor", "last_success_at", "rebuilding"].map { "\(record[$0] ?? "-")" } }
        }
        #expect(rows(statusAfter.stdout) == rows(status.stdout))
        #expect(statusAfter.stdout.contains("The server's answer was too large to read."), "\(statusAfter.stdout)")
    }

    // MARK: PIN and keystore

    @Test func coreDumpsAreOffBeforeTheFirstPINIsRead() throws {
        let home = try AuthHome()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltTools.path("raxx-auth"))
        process.arguments = ["register", "--email", "t@example.com", "--code-fd", "0", "--pin-fd", "0"]
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(home.environment) { _, b in b }
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // The first register: no keystore yet. Wait until it waits for the emailed code…
        let code = try #require(home.sandbox.mailbox.code(for: "t@example.com", after: 0, while: { process.isRunning }))
        let limits = try String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map(String.init) ?? ""
        #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"], "\(core)")
        try stdin.fileHandleForWriting.write(contentsOf: Data("\(code)\n246813\n".utf8))
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func aShortPINIsRefusedForANewPasskey() throws {
        let home = try AuthHome()
        let r = try home.auth(["register", "--email", "t@example.com", "--format", "text"], pin: "2468")
        #expect(r.status == 65)
        #expect(r.stderr.contains("A new passkey's PIN has 6 to 64 characters."))
        #expect(try home.auth(["login"], pin: "2468").status == 4)  // nothing was registered
    }

    // MARK: The cache heals itself

    @Test func aDamagedCacheSaysSoAndTheNextRefreshRebuildsIt() throws {
        let home = try CacheHome(positions: 40, fills: 200)
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        let keystore = try Data(contentsOf: home.root.appendingPathComponent("home/state/keystore"))
        // Overwrite part of the file: the schema page after the header.
        let handle = try FileHandle(forWritingTo: home.cacheFile)
        try handle.seek(toOffset: 100)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 3996))
        try handle.close()

        let show = try home.cache(["show", "positions", "--format", "text"])
        #expect(show.status == 1)
        #expect(show.stderr.contains("The cache at \(home.cacheFile.path) is damaged"))
        #expect(show.stderr.contains("raxx-cache refresh"))

        let refresh = try home.cache(["refresh", "--format", "text"])
        #expect(refresh.status == 0, "\(refresh.stderr)")
        #expect(refresh.stderr.contains("set aside"))
        let again = try home.cache(["show", "positions"])
        #expect(again.status == 0)
        #expect(home.lines(again.stdout).count == 40)
        let folder = try FileManager.default.contentsOfDirectory(atPath: home.cacheFile.deletingLastPathComponent().path)
        #expect(folder.contains { $0.hasPrefix("cache.sqlite.damaged-") })
        #expect(try Data(contentsOf: home.root.appendingPathComponent("home/state/keystore")) == keystore)
    }

    // MARK: The tools' folders

    /// Another local user plants `cache/<server>/accounts` as a link to a folder of theirs: a
    /// refresh once made the account's cache there (and read their database as the user's
    /// positions). Now every tool refuses, exit 77, naming the link, and nothing is made there.
    @Test func aLinkPlantedInTheCacheFoldersIsRefusedAndNothingGoesThroughIt() throws {
        let home = try CacheHome(positions: 3, fills: 10)
        let folders = AccountFolders(try RaxxConfiguration(environment: home.environment))
        let attacker = home.root.appendingPathComponent("attacker").path
        try FileManager.default.createDirectory(atPath: attacker, withIntermediateDirectories: true)
        chmod(attacker, 0o777)
        try FileManager.default.createDirectory(atPath: folders.cacheServerPath, withIntermediateDirectories: true)
        let accounts = folders.cacheServerPath + "/accounts"
        try FileManager.default.createSymbolicLink(atPath: accounts, withDestinationPath: attacker)
        for arguments in [["refresh", "--format", "text"], ["refresh", "--format", "text"], ["show", "positions", "--format", "text"]] {
            let r = try home.cache(arguments)
            #expect(r.status == 77, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("\(accounts) is a symbolic link; refusing to follow it."), "\(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: attacker).isEmpty)
    }

    /// A link at the cache's file or at its lock, pointing outside RAXX_HOME: refused (77), and
    /// the file it points to is neither made, written nor chmodded.
    @Test func aLinkAtTheCacheFileOrItsLockIsRefused() throws {
        let home = try CacheHome(positions: 3, fills: 10)
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        let cacheFile = home.cacheFile.path
        let folder = (cacheFile as NSString).deletingLastPathComponent
        let outside = home.root.appendingPathComponent("outside.sqlite").path
        FileManager.default.createFile(atPath: outside, contents: Data("not a database of yours".utf8), attributes: [.posixPermissions: 0o644])
        for name in ["refresh.lock", "cache.sqlite"] {
            let planted = folder + "/" + name
            try FileManager.default.removeItem(atPath: planted)
            try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: outside)
            let r = try home.cache(["refresh", "--format", "text"])
            #expect(r.status == 77, "\(name): \(r.stderr)")
            #expect(r.stderr.contains("\(planted) is a symbolic link"), "\(name): \(r.stderr)")
            unlink(planted)  // the next name's turn
        }
        #expect(try String(contentsOfFile: outside, encoding: .utf8) == "not a database of yours")
        #expect(try FileManager.default.attributesOfItem(atPath: outside)[.posixPermissions] as? Int == 0o644)
        for suffix in ["-wal", "-shm", "-journal"] { #expect(!FileManager.default.fileExists(atPath: outside + suffix)) }
    }

    /// A cache folder others may write (RAXX_HOME's `cache/`, group-writable): refused with the
    /// chmod that fixes it, then used again once fixed.
    @Test func aCacheFolderOthersMayWriteIsRefusedWithItsFix() throws {
        let home = try CacheHome(positions: 3, fills: 10)
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        let cache = home.root.appendingPathComponent("home/cache").path
        chmod(cache, 0o770)
        chown(cache, geteuid(), 1)  // a group others are in (daemon), not the user's own
        let r = try home.cache(["show", "positions", "--format", "text"])
        #expect(r.status == 77, "\(r.stderr)")
        #expect(r.stderr.contains("\(cache) can be written by other users"), "\(r.stderr)")
        #expect(r.stderr.contains("hint: Fix it with: chmod go-w \(cache)"), "\(r.stderr)")
        chmod(cache, 0o700)
        #expect(try home.cache(["show", "positions"]).status == 0)
    }

    /// `logout --forget-device` removes the account's folders: one planted as a link to a folder
    /// of the user's outside RAXX_HOME goes itself, and that folder survives whole.
    @Test func forgetDeviceRemovesAPlantedLinkNotTheFolderItPointsTo() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        let configuration = try RaxxConfiguration(environment: home.environment)
        let account = try #require(try FileLocalAccounts(configuration).current())
        let keep = home.root.appendingPathComponent("keep").path
        try FileManager.default.createDirectory(atPath: keep + "/photos", withIntermediateDirectories: true)
        try "mine".write(toFile: keep + "/photos/precious", atomically: true, encoding: .utf8)
        let planted = AccountFolders(configuration).cachePath(account)
        try FileManager.default.createDirectory(atPath: (planted as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: keep)
        let logout = try home.auth(["logout", "--forget-device"])
        #expect(logout.status == 0, "\(logout.stderr)")
        var info = stat()
        #expect(lstat(planted, &info) != 0, "the link is gone")
        #expect(try String(contentsOfFile: keep + "/photos/precious", encoding: .utf8) == "mine")
        #expect(!FileManager.default.fileExists(atPath: AccountFolders(configuration).statePath(account)))
    }

    /// The reproduced attack: another user plants `cache/<server>/accounts` as a link to a folder
    /// of the victim's own that holds a folder of the account's name. Removing the account's cache
    /// through that path deleted the folder the link leads to; now the link is refused, named, and
    /// what it leads to survives.
    @Test func forgetDeviceNeverDeletesThroughALinkAboveTheAccountsFolder() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        let configuration = try RaxxConfiguration(environment: home.environment)
        let account = try #require(try FileLocalAccounts(configuration).current())
        let cachePath = AccountFolders(configuration).cachePath(account)
        let accounts = (cachePath as NSString).deletingLastPathComponent
        let keep = home.root.appendingPathComponent("elsewhere").path
        let victim = keep + "/" + (cachePath as NSString).lastPathComponent
        try FileManager.default.createDirectory(atPath: victim, withIntermediateDirectories: true)
        try "mine".write(toFile: victim + "/precious", atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: accounts)
        try FileManager.default.createDirectory(atPath: (accounts as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: accounts, withDestinationPath: keep)
        let logout = try home.auth(["logout", "--forget-device", "--format", "text"])
        #expect(try String(contentsOfFile: victim + "/precious", encoding: .utf8) == "mine", "deleted through the link: \(logout.stderr)")
        #expect(logout.status == 77 && logout.stderr.contains(accounts) && logout.stderr.contains("symbolic link"), "\(logout.stderr)")
    }

    // MARK: The network

    @Test func plainHTTPToLoopbackNeverGoesThroughAProxy() throws {
        let sandbox = try SandboxProcess()
        defer { sandbox.stop() }
        let proxy = try LoopbackListener(.hang)
        defer { proxy.stop() }
        let r = try ToolRunner.run(
            "raxx-auth", ["ping"],
            environment: [
                "RAXX_API_URL": sandbox.url, "http_proxy": proxy.url,
                "HTTP_PROXY": proxy.url, "ALL_PROXY": proxy.url,
            ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(proxy.connections == 0)
    }
}

/// Outcomes of processes run side by side.
final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [(String, Int32, String)] = []
    func append(_ outcome: (String, Int32, String)) { lock.withLock { list.append(outcome) } }
    var all: [(String, Int32, String)] { lock.withLock { list } }
}

import Foundation
import RaxxCore
import RaxxStore
import RaxxTestSupport
import RaxxWire
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A seeded sandbox on a file database, a signed-in RAXX_HOME, and raxx-cache run as a shell would.
final class CacheHome: @unchecked Sendable {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-e2e-cache-\(UUID().uuidString)")
    var sandbox: SandboxProcess?
    /// Between the tools and the sandbox, when the home was made with a reply budget (or
    /// `proxied`: the session's origin is then the proxy's, where a test can put another server).
    var proxy: LoopbackProxy?
    let email = "trader@example.com"
    /// The account's cash once seeded (seeded history moves cash), from seed's summary.
    var seededCash: String?

    init(
        positions: Int = 50, fills: Int = 800, signIn: Bool = true, sandboxArguments: [String] = [],
        replyBudget: Int? = nil, proxied: Bool = false
    ) throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "5555666677778888999900001111aaaa\n".write(to: root.appendingPathComponent("machine-id"), atomically: true, encoding: .utf8)
        let seed = try ToolRunner.run(
            "raxx-sandbox",
            [
                "seed", "--db", database, "--email", email,
                "--positions", "\(positions)", "--fills", "\(fills)",
            ])
        guard seed.status == 0 else { throw SandboxProcess.SandboxError.didNotStart(seed.stderr) }
        let summary = try JSONSerialization.jsonObject(with: Data(seed.stdout.utf8)) as? [String: Any]
        seededCash = summary?["cash"] as? String
        sandbox = try SandboxProcess(arguments: sandboxArguments, database: database)
        if proxied || replyBudget != nil { proxy = try LoopbackProxy(to: sandbox!.port, replyBudget: replyBudget) }
        if signIn {
            let r = try sandbox!.register(email, pin: "246813", environment: environment)
            guard r.status == 0 else { throw SandboxProcess.SandboxError.didNotStart(r.stderr) }
        }
    }

    deinit {
        proxy?.stop()
        sandbox?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    var database: String { root.appendingPathComponent("sandbox.sqlite").path }
    /// The cache of this home's sandbox and signed-in account (each server and account has its own folder).
    var cacheFile: URL {
        guard let configuration = try? RaxxConfiguration(environment: environment),
            let account = try? FileLocalAccounts(configuration).current()
        else {
            return root.appendingPathComponent("home/cache/none/cache.sqlite")
        }
        return URL(fileURLWithPath: AccountFolders(configuration).cachePath(account)).appendingPathComponent("cache.sqlite")
    }

    var environment: [String: String] {
        [
            "RAXX_HOME": root.appendingPathComponent("home").path, "RAXX_API_URL": proxy?.url ?? sandbox?.url ?? "http://127.0.0.1:9",
            "RAXX_MACHINE_ID_FILE": root.appendingPathComponent("machine-id").path,
        ]
    }

    func cache(_ arguments: [String], environment extra: [String: String] = [:], timeout: Double = 120) throws -> ToolResult {
        try ToolRunner.run("raxx-cache", arguments, environment: environment.merging(extra) { _, new in new }, timeout: timeout)
    }

    /// Runs `script` with bash, the built tools first on PATH, in this home's environment.
    func shell(_ script: String) throws -> (status: Int32, stdout: String, stderr: String) {
        try runToEnd(
            URL(fileURLWithPath: "/bin/bash"), ["-c", script],
            environment: environment.merging(
                ["PATH": BuiltTools.toolsDirectory.path + ":/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": root.path]) { _, new in new })
    }

    func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}

@Suite(.serialized, .blocking) struct CacheEndToEndTests {
    @Test func anEmptyCacheSaysSoAndExits3() throws {
        let home = try CacheHome(signIn: false)
        let show = try home.cache(["show", "positions"])
        #expect(show.status == 3)
        #expect(show.stdout.isEmpty)
        #expect(show.stderr.contains("No cached data yet — run raxx-cache refresh while online"))
        #expect(!FileManager.default.fileExists(atPath: home.cacheFile.path))  // a read creates nothing
    }

    @Test func refreshThenShowWithAsOf() throws {
        let home = try CacheHome()
        let refresh = try home.cache(["refresh"])
        #expect(refresh.status == 0, "\(refresh.stderr)")
        #expect(home.lines(refresh.stdout).first?["full"] as? Bool == true)
        let positions = try home.cache(["show", "positions"])
        #expect(positions.status == 0)
        let records = home.lines(positions.stdout)
        #expect(records.count == 50)
        #expect(records.allSatisfy { ($0["as_of"] as? String).flatMap(RFC3339.date(from:)) != nil })
        #expect(positions.stderr.isEmpty)  // fresh data needs no disclosure
        let aapl = try home.cache(["show", "fills", "--symbol", "AAPL", "--limit", "5"])
        #expect(home.lines(aapl.stdout).count == 5)
        #expect(home.lines(aapl.stdout).allSatisfy { $0["symbol"] as? String == "AAPL" })
        let portfolio = try home.cache(["show", "portfolio"])
        #expect(home.seededCash != nil)
        #expect(home.lines(portfolio.stdout).first?["cash"] as? String == home.seededCash)
        let quiet = try home.cache(["refresh", "--quiet"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty)
        let verify = try home.cache(["verify"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    }

    @Test func maxAgeFailsClosedAfterPrinting() throws {
        let home = try CacheHome()
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        Thread.sleep(forTimeInterval: 1.2)
        let show = try home.cache(["show", "positions", "--max-age", "1s", "--format", "text"])
        #expect(show.status == 3)
        #expect(show.stdout.hasPrefix("SYMBOL"))
        #expect(show.stderr.contains("older than --max-age 1s"))
        // The README's fail-closed script, as a shell runs it (cat for jq): nothing goes through.
        let readme = #"portfolio=$(raxx-cache show portfolio --max-age 1s) || { echo "cache too old" >&2; exit 3; }; cat <<<"$portfolio""#
        let script = try home.shell(readme)
        #expect(script.status == 3 && script.stdout.isEmpty && script.stderr.hasSuffix("cache too old\n"), "\(script)")
        // The pipe it replaced let the stale data through with jq's status.
        let piped = try home.shell(#"raxx-cache show portfolio --max-age 1s | cat || echo "cache too old" >&2"#)
        #expect(piped.status == 0 && !piped.stdout.isEmpty)
        let fresh = try home.cache(["show", "positions", "--max-age", "1h"])
        #expect(fresh.status == 0)
        let old = try home.cache(["show", "positions"], environment: ["RAXX_CACHE_FRESHNESS": "1s"])
        #expect(old.stderr.hasPrefix("Data last updated at "))
        #expect(old.stderr.contains(" ago)"))
    }

    @Test(arguments: ["refuse", "hang", "503"])
    func offlineRefreshExits69AndReadsStillAnswer(mode: String) throws {
        let home = try CacheHome()
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        // The same server, gone away: nothing at its address, or something that hangs or is unhealthy.
        let sandbox = try #require(home.sandbox)
        sandbox.stop()
        let listener = try LoopbackListener(
            mode == "refuse" ? .refuse : mode == "hang" ? .hang : .respond(status: 503, body: "down"),
            port: sandbox.port)
        defer { listener.stop() }
        let offline = ["RAXX_TIMEOUT": "1s"]
        let refresh = try home.cache(["refresh", "--format", "text"], environment: offline, timeout: 30)
        #expect(refresh.status == 69)
        #expect(refresh.stderr.hasPrefix("raxx-cache: This action requires an internet connection. Try again when online.\n"))
        // From cron: offline is no news worth a mail every five minutes, in text or JSON.
        for format in ["text", "json"] {
            let quiet = try home.cache(["refresh", "--quiet", "--format", format], environment: offline, timeout: 30)
            #expect(quiet.status == 69 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet.stderr)")
        }
        let connectionsAfterRefresh = listener.connections
        let show = try home.cache(["show", "positions"], environment: offline)
        #expect(show.status == 0)
        #expect(home.lines(show.stdout).count == 50)
        #expect(show.stderr.hasPrefix("No connection — data last updated at "))
        let status = try home.cache(["status"], environment: offline)
        #expect(home.lines(status.stdout).first?["last_error_kind"] as? String == (mode == "refuse" ? "offline-hard" : "offline-soft"))
        // Reads made no connection at all.
        #expect(listener.connections == connectionsAfterRefresh)
        // Back online, a refresh that succeeds clears the last error from status.
        listener.stop()
        try sandbox.restart()
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        let recovered = home.lines(try home.cache(["status"]).stdout).first
        #expect(recovered?["last_error_kind"] == nil && recovered?["last_error_message"] == nil, "\(String(describing: recovered))")
    }

    /// Through a pseudo-terminal (script(1)) five rows high: a table longer than the screen goes
    /// through $PAGER, statuses in colour; with --no-pager, or into a pipe, it does not.
    @Test func aLongTableOnATerminalGoesThroughThePager() throws {
        let home = try CacheHome()
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        let pagerOut = home.root.appendingPathComponent("paged.txt").path
        let tool = BuiltTools.path("raxx-cache")
        func onTerminal(_ arguments: String, pager: String? = nil) throws -> String {
            let command = "stty rows 5 cols 200; \(tool) show orders \(arguments)"
            let environment = home.environment.merging(["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PAGER": pager ?? "cat > \(pagerOut)"]) { _, b in b }
            return try runToEnd(URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"], environment: environment).stdout
        }
        let shown = try onTerminal("")
        let paged = try String(contentsOfFile: pagerOut, encoding: .utf8)
        #expect(paged.hasPrefix("UPDATED") && paged.split(separator: "\n").count > 5, "\(paged.prefix(300))")
        #expect(!shown.contains("CLIENT ORDER ID"), "\(shown)")  // all of it went to the pager
        try FileManager.default.removeItem(atPath: pagerOut)
        let unpaged = try onTerminal("--no-pager")
        #expect(!FileManager.default.fileExists(atPath: pagerOut))
        #expect(unpaged.split(whereSeparator: \.isNewline).count > 5, "\(unpaged)")
        // A pager that is not there: the table is written as it is, not lost.
        let missing = try onTerminal("", pager: "raxx-no-such-pager")
        #expect(missing.contains("CLIENT ORDER ID") && missing.split(whereSeparator: \.isNewline).count > 5, "\(missing)")
        // Into a pipe: no pager, no colour.
        let piped = try home.cache(["show", "orders", "--format", "text"], environment: ["PAGER": "cat > \(pagerOut)"])
        #expect(!FileManager.default.fileExists(atPath: pagerOut) && !piped.stdout.contains("\u{1B}["))
    }

    @Test func readsNeverTouchTheNetwork() throws {
        let home = try CacheHome()
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        // Whatever answers at the server's address now counts every connection.
        let sandbox = try #require(home.sandbox)
        sandbox.stop()
        let listener = try LoopbackListener(.respond(status: 200, body: "{}"), port: sandbox.port)
        defer { listener.stop() }
        for arguments in [
            ["show", "positions"], ["show", "fills", "--limit", "3"], ["show", "orders"], ["show", "portfolio"], ["status"],
            ["purge", "--older-than", "3650d"],
        ] {
            #expect(try home.cache(arguments).status == 0)
        }
        #expect(listener.connections == 0)
    }

    @Test func aSecondRefreshWaitsOrExits75() throws {
        let home = try CacheHome()
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        let lockPath = home.cacheFile.deletingLastPathComponent().appendingPathComponent("refresh.lock").path
        let fd = open(lockPath, O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        let busy = try home.cache(["refresh", "--no-wait", "--format", "text"])
        #expect(busy.status == 75)
        #expect(busy.stderr.hasPrefix("raxx-cache: Another refresh is running."))
        flock(fd, LOCK_UN)
        #expect(try home.cache(["refresh", "--no-wait", "--quiet"]).status == 0)
    }

    /// A refresh turned away by the lock exits while libcurl is still loading on another thread
    /// (it loads while the lock is taken). exit() once tore OpenSSL down under curl_global_init:
    /// about one run in 300 died of SIGSEGV instead of exiting 75 (seen in CI). The race is a
    /// matter of timing, so this runs it many times, three at once.
    @Test func aRefreshTurnedAwayByTheLockNeverCrashes() throws {
        let home = try CacheHome(positions: 0, fills: 0)
        let directory = home.cacheFile.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let fd = open(directory.appendingPathComponent("refresh.lock").path, O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        let statuses = Mutex<[Int32: Int]>([:])
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            for _ in 0..<100 {
                let status = (try? home.cache(["refresh", "--no-wait"]))?.status ?? -1
                statuses.withLock { $0[status, default: 0] += 1 }
            }
        }
        #expect(statuses.withLock { $0 } == [75: 300])
    }

    @Test func signedOutRefreshExits4() throws {
        let home = try CacheHome(signIn: false)
        let r = try home.cache(["refresh", "--format", "text"])
        #expect(r.status == 4)
        #expect(r.stderr.hasPrefix("raxx-cache: Not signed in to \(home.sandbox?.url ?? ""): raxx-auth login"))
    }

    @Test func aKilledRefreshResumesAndVerifiesWithoutDrift() throws {
        // The tools reach the sandbox through a proxy that stops its replies after 8 MiB (some
        // five pages of the history's fifteen): the refresh is then under way and cannot finish,
        // however fast or slow the machine. It waits on the held reply rather than give up.
        let home = try CacheHome(positions: 400, fills: 60_000, replyBudget: 8 << 20)
        let proxy = try #require(home.proxy)
        let cacheFile = home.cacheFile
        let folders = PrivateFolders(try RaxxConfiguration(environment: home.environment))
        // Generous bounds: on a machine busy with the other suites, a connection or an answer may
        // be slow to come, and nothing here is about timeouts.
        let errors = home.root.appendingPathComponent("refresh.stderr")
        let process = try ToolRunner.start(
            "raxx-cache", ["refresh"],
            environment: home.environment.merging(
                ["RAXX_TIMEOUT": "300s", "RAXX_CONNECT_TIMEOUT": "60s"]) { _, new in new }, stderr: errors)
        var applied: Int64 = 0
        let progressed = ToolRunner.waitUntil(timeout: 120) {
            guard process.isRunning else { return true }
            // The cache is opened only once the proxy holds: the refresh made and migrated it long
            // before, and waits on the network. Opened while the refresh is still making it, this
            // probe's connection took the lock the refresh needed to turn WAL on ("database is
            // locked"), and the refresh ended.
            guard proxy.isHolding else { return false }
            applied = (try? CacheStore.openExisting(at: cacheFile, in: folders)?.syncState().rebuildCursor) ?? 0
            return applied > 5_000
        }
        #expect(
            progressed && process.isRunning,
            """
            the refresh was not held mid-way (\(applied) changes applied; \(process.isRunning ? "running" : "exit \(process.terminationStatus)"): \
            \((try? String(contentsOf: errors, encoding: .utf8)) ?? ""))
            """)
        // Killed without warning, part-way through its first fill.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        proxy.release()
        let midway = try home.cache(["show", "positions"])
        #expect(midway.status == 3)  // a half-built first fill is never shown
        let resume = try home.cache(["refresh"])
        #expect(resume.status == 0, "\(resume.stderr)")
        let verify = try home.cache(["verify", "--format", "text"])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(!verify.stdout.contains("NO"))
    }

    @Test func purgeAllEmptiesAndTheNextRefreshIsFull() throws {
        let home = try CacheHome()
        #expect(try home.cache(["refresh", "--quiet"]).status == 0)
        #expect(try home.cache(["purge", "--all"]).status == 0)
        #expect(try home.cache(["show", "positions"]).status == 3)
        let again = try home.cache(["refresh"])
        #expect(home.lines(again.stdout).first?["full"] as? Bool == true)
        #expect(try home.cache(["purge"]).status == 64)
    }
}

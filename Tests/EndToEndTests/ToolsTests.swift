import Foundation
import RaxxCore
import RaxxTestSupport
import Testing

let tools = ["raxx-auth", "raxx-cache", "raxx-order", "raxx-notify", "raxx-dsr", "raxx-sandbox"]

/// The built executables, run as a shell runs them.
@Suite(.blocking) struct ToolsTests {
    /// The end-to-end suites wait for child processes on lanes of their own: on the concurrency
    /// runtime's pool, two of them held a 2-core machine's every pool thread, and the other suites'
    /// in-process sandboxes answered nothing for 20 s.
    @Test func aBlockingTestRunsOnALaneNotOnTheThreadPool() {
        #expect(BlockingLanes.isCurrent)
    }

    /// A tool that ends without reading its input (more than a pipe holds) closes the pipe under
    /// the runner's write: the rest is dropped, and the tests go on. The runner's write used to
    /// crash the whole test process on the broken pipe (CI: `login`, ending before it read a PIN).
    @Test func aToolThatEndsWithoutReadingItsInputLeavesTheTestsRunning() throws {
        let r = try ToolRunner.run("raxx-auth", ["--version"], input: String(repeating: "246813\n", count: 150_000))
        #expect(r.status == 0)
        #expect(r.stdout == RaxxVersion.line(tool: "raxx-auth") + "\n")
    }

    @Test(arguments: tools)
    func answersVersion(tool: String) throws {
        let r = try ToolRunner.run(tool, ["--version"])
        #expect(r.status == 0)
        // The tool, its version, and the commit it was built from with its date.
        #expect(r.stdout == "\(tool) \(RaxxVersion.current) (\(RaxxVersion.commit), \(RaxxVersion.commitDay))\n")
        #expect(RaxxVersion.commit.count >= 7 && RaxxVersion.commitDay.count == 10, "built from a checkout")
        #expect(r.stderr.isEmpty)
        // The version verb says the same; into a pipe, as JSON.
        let verb = try ToolRunner.run(tool, ["version"] + (tool == "raxx-sandbox" ? [] : ["--format", "text"]))
        #expect(verb.status == 0 && verb.stdout == r.stdout, "\(tool): \(verb.stdout) \(verb.stderr)")
        if tool != "raxx-sandbox" {
            let json = try ToolRunner.run(tool, ["version"])
            #expect(
                json.stdout == #"{"commit":"\#(RaxxVersion.commit)","date":"\#(RaxxVersion.commitDay)","tool":"\#(tool)","version":"\#(RaxxVersion.current)"}"#
                    + "\n")
        }
    }

    @Test(arguments: tools)
    func answersHelp(tool: String) throws {
        let r = try ToolRunner.run(tool, ["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("USAGE: \(tool) <subcommand>\n"), "\(r.stdout)")
        #expect(r.stdout.contains("USAGE: \(tool)"))
    }

    static let verbs: [String: [String]] = [
        "raxx-auth": ["register", "login", "status", "whoami", "logout", "ping", "activity", "sessions", "passkeys"],
        "raxx-cache": ["refresh", "show", "status", "verify", "purge"],
        "raxx-order": ["place", "watch", "list", "show", "cancel", "reconcile", "heartbeat", "disarm"],
        "raxx-notify": ["list", "watch", "devices", "push"],
        "raxx-dsr": [
            "open", "verify-identity", "extend", "list", "show", "cancel", "refuse", "export", "plan", "apply", "receipt",
            "verify-receipt", "audit",
        ],
        "raxx-sandbox": ["serve", "seed", "churn", "staff", "apns", "erasure-rules"],
    ]

    /// Each tool lists its verbs by the names they have always had, and each answers its own --help
    /// (the names are spelled out in the commands now, not derived from their types at start-up).
    @Test(arguments: tools)
    func everyVerbAnswersToItsName(tool: String) throws {
        let help = try ToolRunner.run(tool, ["--help"])
        let listed = help.stdout.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first else { return nil }
            return String(name)
        }
        #expect(listed.map { Array($0.prefix(Self.verbs[tool]?.count ?? 0)) } == Self.verbs[tool])
        for verb in Self.verbs[tool] ?? [] {
            let r = try ToolRunner.run(tool, [verb, "--help"])
            #expect(r.status == 0, "\(tool) \(verb) --help")
            #expect(r.stdout.contains("USAGE: \(tool) \(verb)"), "\(tool) \(verb) --help")
        }
    }

    /// A mistyped verb is a usage error that says what it may have meant, as gh does (a mistyped
    /// flag already did); a word far from every verb gets no guess.
    @Test func unknownVerbIsAUsageErrorWithASuggestion() throws {
        let cases: [(String, [String], String)] = [
            ("raxx-cache", ["shwo"], "show"), ("raxx-cache", ["stauts"], "status"),
            ("raxx-auth", ["passkeys", "lsit"], "list"), ("raxx-order", ["plcae", "--json"], "place"),
        ]
        for (tool, arguments, meant) in cases {
            let r = try ToolRunner.run(tool, arguments + ["--format", "text"])
            #expect(r.status == 64, "\(tool) \(arguments)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.contains("Unknown command '\(arguments.last { !$0.hasPrefix("-") } ?? "")'"), "\(r.stderr)")
            #expect(r.stderr.contains("Did you mean '\(meant)'?"), "\(tool) \(arguments): \(r.stderr)")
        }
        let json = try ToolRunner.run("raxx-cache", ["shwo", "--json"])
        #expect(json.status == 64 && json.stderr.contains(#""code":"usage""#) && json.stderr.contains("Did you mean 'show'?"), "\(json.stderr)")
        let far = try ToolRunner.run("raxx-cache", ["frobnicate"])
        #expect(far.status == 64 && far.stderr.contains("frobnicate") && !far.stderr.contains("Did you mean"), "\(far.stderr)")
    }

    /// `--help` as gh lays it out: USAGE, the summary and whether it needs the network, the
    /// options, the examples that run this verb, and where to learn more; the prose is the man
    /// page's. (It began with OVERVIEW and a paragraph of prose, and verbs showed no examples.)
    @Test func helpIsLaidOutAsGhUsersExpect() throws {
        let r = try ToolRunner.run("raxx-cache", ["status", "--help"], environment: ["COLUMNS": "80"])
        #expect(r.status == 0)
        #expect(
            r.stdout == """
                USAGE: raxx-cache status [--format <format>] [--json] [--quiet] [--no-pager]

                Show what the cache holds and how its last refresh went.
                Connectivity: offline-capable (never touches the network).

                OPTIONS:
                  --format <format>       Output format: text (tables) or json (JSON Lines).
                                          Default: text on a terminal, json otherwise. (values:
                                          text, json)
                  --json                  Same as --format json.
                  --quiet                 Print on stderr only what needs a person: no
                                          progress, no notes, and nothing when offline (exit
                                          69), busy (exit 75) or older than --max-age (exit 3).
                                          For cron.
                  --no-pager              Never page a long table on a terminal (see $PAGER).
                  --version               Show the version.
                  -h, --help              Show help information.

                EXAMPLES:
                  # How old the cache is, and its limits
                  raxx-cache status

                LEARN MORE:
                  man raxx-cache  every verb in full
                  man raxx        the conventions: output, errors, exit statuses, environment

                """, "\(r.stdout)")
        // A tool's help: its verbs, every example, and how to get a verb's help; `help VERB` is `VERB --help`.
        let root = try ToolRunner.run("raxx-order", ["--help"])
        #expect(root.stdout.hasPrefix("USAGE: raxx-order <subcommand>\n\nEnter paper-trading orders.\n"), "\(root.stdout)")
        #expect(root.stdout.contains("\nSUBCOMMANDS:\n") && root.stdout.contains("\nEXAMPLES:\n"))
        #expect(root.stdout.hasSuffix("  raxx-order <subcommand> --help  a verb's options\n"), "\(root.stdout)")
        #expect(!root.stdout.contains("OVERVIEW"))
        let verb = try ToolRunner.run("raxx-order", ["help", "place"])
        #expect(verb.status == 0 && verb.stdout.hasPrefix("USAGE: raxx-order place <options>\n\nPlace paper orders"), "\(verb.stdout)")
        #expect(verb.stdout.contains("raxx-order place --symbol AAPL --side buy --qty 10 --dry-run"))
        #expect(!verb.stdout.contains("raxx-order watch ord_01HZX3"), "only the examples of this verb")
        // The sandbox's too (it kept the parser's layout: OVERVIEW, prose, then USAGE).
        let sandbox = try ToolRunner.run("raxx-sandbox", ["--help"])
        #expect(sandbox.status == 0 && sandbox.stdout.hasPrefix("USAGE: raxx-sandbox <subcommand>\n\nRun a local Raptor server"), "\(sandbox.stdout)")
        #expect(sandbox.stdout.contains("\nEXAMPLES:\n  # A sandbox on a file, for the tools to use\n") && !sandbox.stdout.contains("OVERVIEW"))
        #expect(sandbox.stdout.hasSuffix("  raxx-sandbox <subcommand> --help  a verb's options\n"), "\(sandbox.stdout)")
        let serve = try ToolRunner.run("raxx-sandbox", ["help", "serve"])
        #expect(serve.status == 0 && serve.stdout.hasPrefix("USAGE: raxx-sandbox serve "), "\(serve.stdout)")
        #expect(serve.stdout.contains("raxx-sandbox serve --port 8080 --db sandbox.sqlite"))
    }

    /// Options that take one of a set of values complete those values in every shell (--side
    /// completed nothing: it is read as text, so that a flag and a JSON line are checked alike).
    @Test func enumValuedOptionsCompleteTheirValues() throws {
        let bash = try ToolRunner.run("raxx-order", ["--generate-completion-script", "bash"]).stdout
        for values in ["'buy'$'\\n''sell'", "'market'$'\\n''limit'", "'day'$'\\n''gtc'"] { #expect(bash.contains(values), "\(values)") }
        let zsh = try ToolRunner.run("raxx-order", ["--generate-completion-script", "zsh"]).stdout
        #expect(zsh.contains("___side=('buy' 'sell')"))
        let fish = try ToolRunner.run("raxx-notify", ["--generate-completion-script", "fish"]).stdout
        #expect(fish.contains("-l 'environment'") && fish.contains("-rfka 'sandbox production'"))
        #expect(fish.contains("-rfka 'fill_confirmed order_rejected order_cancelled session_expiring security_alert'"))
        let dsr = try ToolRunner.run("raxx-dsr", ["--generate-completion-script", "bash"]).stdout
        #expect(dsr.contains("'access'$'\\n''erasure'"))
    }

    /// Offline commands never load the network stack: the dynamic loader's own account of what it
    /// loaded (LD_DEBUG) names no libcurl, while a network command loads it at its first request.
    @Test func offlineCommandsNeverLoadLibcurl() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-nocurl-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let offline: [(String, [String])] = [
            ("raxx-auth", ["status"]), ("raxx-cache", ["status"]), ("raxx-cache", ["show", "positions"]),
            ("raxx-order", ["list", "--cached"]), ("raxx-auth", ["--version"]),
        ]
        for (tool, arguments) in offline {
            let r = try ToolRunner.run(tool, arguments, environment: ["RAXX_HOME": home, "LD_DEBUG": "files"])
            #expect(!r.stderr.contains("libcurl"), "\(tool) \(arguments.joined(separator: " ")) loaded libcurl")
            #expect(r.stderr.contains("calling init"), "LD_DEBUG said nothing: the check would prove nothing")
        }
        let listener = try LoopbackListener(.refuse)
        let online = try ToolRunner.run("raxx-auth", ["ping"], environment: ["RAXX_HOME": home, "LD_DEBUG": "files", "RAXX_API_URL": listener.url])
        #expect(online.status == 69)
        #expect(online.stderr.contains("libcurl.so.4"))
    }

    @Test func unknownOptionIsAUsageError() throws {
        let r = try ToolRunner.run("raxx-auth", ["ping", "--frobnicate"])
        #expect(r.status == 64)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("--frobnicate"))
    }

    /// With JSON asked for (--json, --format json, RAXX_ERRORS=json) a usage error is the one JSON
    /// object every other error is; otherwise, into a pipe too, the parser's message and usage.
    @Test func aUsageErrorIsJSONWhenJSONWasAskedFor() throws {
        let cases: [(String, [String], [String: String])] = [
            ("raxx-cache", ["show", "positions", "--bogus", "--json"], [:]), ("raxx-order", ["list", "--limit", "x", "--format", "json"], [:]),
            ("raxx-notify", ["list", "--type", "bogus", "--json"], [:]), ("raxx-dsr", ["list", "--due-within", "7x"], ["RAXX_ERRORS": "json"]),
        ]
        for (tool, arguments, environment) in cases {
            let r = try ToolRunner.run(tool, arguments, environment: environment)
            #expect(r.status == 64, "\(tool) \(arguments)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(tool): \(r.stderr)")
            let object = try? JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any]
            let error = object?["error"] as? [String: Any]
            #expect(error?["code"] as? String == "usage", "\(tool): \(r.stderr)")
            #expect((error?["message"] as? String)?.isEmpty == false && (error?["hint"] as? String)?.contains("--help") == true)
        }
        for arguments in [["show", "positions", "--bogus", "--format", "text"], ["show", "positions", "--bogus"]] {
            let text = try ToolRunner.run("raxx-cache", arguments)
            #expect(text.status == 64 && text.stderr.hasPrefix("Error: ") && text.stderr.contains("Usage: "), "\(arguments): \(text.stderr)")
        }
    }
}

/// `raxx-auth ping` online, hard offline and soft offline.
@Suite(.serialized, .blocking) struct PingEndToEndTests {
    @Test func onlineItPrintsOneJSONLine() throws {
        let sandbox = try SandboxProcess()
        defer { sandbox.stop() }
        let r = try ToolRunner.run("raxx-auth", ["ping"], environment: ["RAXX_API_URL": sandbox.url])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let record = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(record?["status"] as? String == "ok")
        #expect(record?["server_version"] as? String == RaxxVersion.current)
        #expect(record?["api_url"] as? String == sandbox.url)
        #expect(r.stderr.isEmpty)
    }

    @Test func textFormatPrintsATable() throws {
        let sandbox = try SandboxProcess()
        defer { sandbox.stop() }
        let r = try ToolRunner.run("raxx-auth", ["ping", "--format", "text"], environment: ["RAXX_API_URL": sandbox.url])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("SERVER"))
        #expect(r.stdout.contains(sandbox.url))
    }

    static let offlineMessage = "raxx-auth: This action requires an internet connection. Try again when online.\n"

    @Test func hardOfflineExits69AtOnce() throws {
        let listener = try LoopbackListener(.refuse)
        let r = try ToolRunner.run("raxx-auth", ["ping"], environment: ["RAXX_API_URL": listener.url, "RAXX_TIMEOUT": "60s"], timeout: 90)
        #expect(r.status == 69)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix(Self.offlineMessage), "into a pipe too, an error is text for a person: \(r.stderr)")
        #expect(r.seconds < 30)  // refused connections fail fast, not at the 60 s timeout (a generous bound, not a benchmark)
    }

    @Test func softOfflineHangingExits69WithinTheTimeout() throws {
        let listener = try LoopbackListener(.hang)
        defer { listener.stop() }
        let r = try ToolRunner.run(
            "raxx-auth", ["ping", "--format", "text"],
            environment: ["RAXX_API_URL": listener.url, "RAXX_TIMEOUT": "1s"], timeout: 30)
        #expect(r.status == 69)
        #expect(r.stderr.hasPrefix(Self.offlineMessage))
        #expect(!r.stderr.contains("HTTP"))
        #expect(r.stdout.isEmpty)
    }

    @Test func softOffline503Exits69() throws {
        let listener = try LoopbackListener(.respond(status: 503, headers: ["Retry-After": "30"], body: "busy"))
        defer { listener.stop() }
        let r = try ToolRunner.run("raxx-auth", ["ping", "--format", "text"], environment: ["RAXX_API_URL": listener.url])
        #expect(r.status == 69)
        #expect(r.stderr.hasPrefix(Self.offlineMessage))
        #expect(!r.stderr.contains("503"))
    }

    @Test func plainHTTPToARemoteHostIsRefusedBeforeAnyConnection() throws {
        let r = try ToolRunner.run("raxx-auth", ["ping", "--json"], environment: ["RAXX_API_URL": "http://api.raxx.app"])
        #expect(r.status == 64)
        #expect(
            r.stderr
                == #"{"error":{"code":"usage","hint":"Use https, or a loopback address such as http://127.0.0.1:PORT.","#
                + #""message":"Refusing plain http to api.raxx.app: only loopback servers may use http."}}"#
                + "\n")
    }
}

/// `raxx-sandbox serve` and `seed` as processes.
@Suite(.serialized, .blocking) struct SandboxEndToEndTests {
    @Test func serveAnnouncesItsPortFirstAndStopsCleanlyOnSIGTERM() throws {
        let sandbox = try SandboxProcess()
        #expect(sandbox.url.hasPrefix("http://127.0.0.1:"))
        #expect(sandbox.isRunning)
        #expect(sandbox.stop() == 0)
    }

    @Test func seedLoadsAFileDatabaseThatServeThenServes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("sandbox.sqlite").path
        let r = try ToolRunner.run("raxx-sandbox", ["seed", "--db", db, "--email", "trader@example.com", "--positions", "25", "--fills", "200"])
        #expect(r.status == 0)
        let summary = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(summary?["positions"] as? Int == 25)
        #expect(summary?["fills"] as? Int == 200)
        #expect(summary?["created_account"] as? Bool == true)
        let sandbox = try SandboxProcess(database: db)
        defer { sandbox.stop() }
        let ping = try ToolRunner.run("raxx-auth", ["ping"], environment: ["RAXX_API_URL": sandbox.url])
        #expect(ping.status == 0)
    }

    @Test func seedRefusesAnInMemoryDatabase() throws {
        let r = try ToolRunner.run("raxx-sandbox", ["seed", "--db", ":memory:", "--email", "a@example.com"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("name a file"))
    }
}

import Foundation
import RaxxTestSupport
import Testing

/// raxx-dsr against a sandbox on a database file, as support staff run it: a staff member and a
/// data subject (and any other accounts), each with a passkey on a home of their own.
final class DSRHome: @unchecked Sendable {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-e2e-dsr-\(UUID().uuidString)")
    var sandbox: SandboxProcess!
    let staffEmail = "staff@example.com"
    let subjectEmail: String
    /// Accounts besides the subject's, seeded and registered as it is.
    let others: [String]
    static let pin = "246813\n"

    init(sandboxArguments: [String] = [], fills: Int = 30, subjectEmail: String = "subject@example.com", others: [String] = []) throws {
        self.subjectEmail = subjectEmail
        self.others = others
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "1234123412341234abcdabcdabcdabcd\n".write(to: root.appendingPathComponent("machine-id"), atomically: true, encoding: .utf8)
        let traders: [(String, [String])] = ([subjectEmail] + others).map { ($0, ["--positions", "6", "--fills", "\(fills)"]) }
        for (email, extra) in traders + [(staffEmail, ["--positions", "0", "--fills", "0", "--staff"])] {
            let seed = try ToolRunner.run("raxx-sandbox", ["seed", "--db", database, "--email", email] + extra)
            guard seed.status == 0 else { throw SandboxProcess.SandboxError.didNotStart(seed.stderr) }
        }
        sandbox = try SandboxProcess(arguments: sandboxArguments, database: database)
        for who in [staffEmail, subjectEmail] + others {
            let r = try sandbox.register(who, pin: Self.pin.trimmingCharacters(in: .newlines), environment: environment(who))
            guard r.status == 0 else { throw SandboxProcess.SandboxError.didNotStart(r.stderr) }
        }
    }

    deinit {
        sandbox?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    var database: String { root.appendingPathComponent("sandbox.sqlite").path }

    func environment(_ who: String) -> [String: String] {
        [
            "RAXX_HOME": root.appendingPathComponent(who == staffEmail ? "staff" : who == subjectEmail ? "subject" : who).path,
            "RAXX_API_URL": sandbox?.url ?? "http://127.0.0.1:9", "RAXX_MACHINE_ID_FILE": root.appendingPathComponent("machine-id").path,
        ]
    }

    func dsr(_ arguments: [String], as who: String? = nil, input: String? = nil, environment extra: [String: String] = [:]) throws -> ToolResult {
        try ToolRunner.run(
            "raxx-dsr", arguments, environment: environment(who ?? staffEmail).merging(extra) { _, new in new }, input: input,
            timeout: 120)
    }

    func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// A verified request of `kind` for the subject; answers its id.
    func verifiedRequest(_ kind: String) throws -> String {
        let opened = try dsr(["open", "--email", subjectEmail, "--kind", kind, "--ticket", "T-42"])
        #expect(opened.status == 0, "\(opened.stderr)")
        let id = try #require(lines(opened.stdout).first?["id"] as? String)
        let verified = try dsr(["verify-identity", id, "--method", "reply from the account's email"])
        #expect(verified.status == 0, "\(verified.stderr)")
        return id
    }

    /// Runs a system tool (age, age-keygen).
    func run(_ path: String, _ arguments: [String]) throws -> (status: Int32, stdout: String) { try ToolRunner.system(path, arguments) }

    /// One value of a query on the sandbox's database (sqlite3).
    func sql(_ query: String) throws -> String { try ToolRunner.sqlite(database, query) }
}

@Suite(.serialized, .blocking) struct DSREndToEndTests {
    @Test func aNonStaffAccountIsRefused77AndAudited() throws {
        let home = try DSRHome(fills: 0)
        let r = try home.dsr(["list", "--format", "text"], as: home.subjectEmail)
        #expect(r.status == 77)
        #expect(r.stderr.contains("Staff only"))
        #expect(try home.sql("SELECT COUNT(*) FROM audit_events WHERE action = 'access.refused' AND details LIKE '%listDSRRequests%'") == "1")
        // raxx-sandbox staff grant lets the same session in; revoke shuts it out again; both audited.
        let grant = try ToolRunner.run("raxx-sandbox", ["staff", "grant", "--db", home.database, "--email", home.subjectEmail])
        #expect(grant.status == 0, "\(grant.stderr)")
        #expect(try home.dsr(["list"], as: home.subjectEmail).status == 0)
        #expect(try ToolRunner.run("raxx-sandbox", ["staff", "revoke", "--db", home.database, "--email", home.subjectEmail]).status == 0)
        #expect(try home.dsr(["list"], as: home.subjectEmail).status == 77)
        #expect(
            try home.sql("SELECT group_concat(action) FROM audit_events WHERE action LIKE 'staff.%' AND actor = 'raxx-sandbox staff'")
                == "staff.granted,staff.revoked")
        // An unknown email: the account must be registered first, and it is said so (65).
        let unknown = try ToolRunner.run("raxx-sandbox", ["staff", "grant", "--db", home.database, "--email", "nobody@example.com"])
        #expect(unknown.status == 65 && unknown.stderr.contains("register it first (raxx-auth register --email nobody@example.com)"))
        // Offline: 69, nothing sent.
        home.sandbox.stop()
        let offline = try home.dsr(["list", "--format", "text"])
        #expect(offline.status == 69)
        #expect(offline.stderr.contains("requires an internet connection"))
    }

    @Test func anAccessExportMatchesTheDatabase() throws {
        let home = try DSRHome()
        let id = try home.verifiedRequest("access")
        let out = home.root.appendingPathComponent("export.json").path
        let r = try home.dsr(["export", id, "--out", out])
        #expect(r.status == 0, "\(r.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: out)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // The export goes to the subject: the staff member who handled it appears by role.
        let exported = try String(contentsOfFile: out, encoding: .utf8)
        #expect(!exported.contains(home.staffEmail))
        #expect(exported.contains("support staff"))
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])
        let manifest = try #require((document["manifest"] as? [String: Any])?["tables"] as? [[String: Any]])
        let rows = Dictionary(uniqueKeysWithValues: manifest.map { ($0["table"] as? String ?? "", $0["rows"] as? Int ?? -1) })
        let account = try home.sql("SELECT accounts.id FROM accounts JOIN users ON users.id = accounts.user_id WHERE users.email = '\(home.subjectEmail)'")
        let user = try home.sql("SELECT id FROM users WHERE email = '\(home.subjectEmail)'")
        #expect(rows["fills"] == Int(try home.sql("SELECT COUNT(*) FROM fills WHERE account_id = '\(account)'")))
        #expect(rows["orders"] == Int(try home.sql("SELECT COUNT(*) FROM orders WHERE account_id = '\(account)'")))
        #expect(rows["positions"] == Int(try home.sql("SELECT COUNT(*) FROM positions WHERE account_id = '\(account)'")))
        #expect(rows["passkeys"] == Int(try home.sql("SELECT COUNT(*) FROM passkeys WHERE user_id = '\(user)'")))
        #expect(rows["sessions"] == Int(try home.sql("SELECT COUNT(*) FROM sessions WHERE user_id = '\(user)'")))
        #expect(rows["account"] == 1 && rows["dsr_requests"] == 1)
        #expect((rows["fills"] ?? 0) > 0)
        // Encrypted to an age recipient, the standard age tool opens it to the same document.
        let key = home.root.appendingPathComponent("requester.key").path
        #expect(try home.run("/usr/bin/age-keygen", ["-o", key]).status == 0)
        let recipient = try home.run("/usr/bin/age-keygen", ["-y", key]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let sealed = home.root.appendingPathComponent("export.age").path
        let encrypted = try home.dsr(["export", id, "--out", sealed, "--encrypt-to", recipient])
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let opened = try home.run("/usr/bin/age", ["-d", "-i", key, sealed])
        #expect(opened.status == 0)
        let decrypted = try #require(try JSONSerialization.jsonObject(with: Data(opened.stdout.utf8)) as? [String: Any])
        let decryptedTables = try #require((decrypted["manifest"] as? [String: Any])?["tables"] as? [[String: Any]])
        // (The audit trail has grown by the first export's own entry since.)
        let decryptedRows = Dictionary(uniqueKeysWithValues: decryptedTables.map { ($0["table"] as? String ?? "", $0["rows"] as? Int ?? -1) })
        #expect(decryptedRows.filter { $0.key != "audit_events" } == rows.filter { $0.key != "audit_events" })
        // Never over an existing file; the request is completed.
        let again = try home.dsr(["export", id, "--out", out, "--format", "text"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("never written over"))
        #expect(home.lines(try home.dsr(["show", id]).stdout).first?["status"] as? String == "completed")
    }

    /// RAXX_DEBUG=api shows each exchange on stderr, but never an export's contents, which are
    /// sealed for the requester alone: the export's body shows by its size (as do the request's,
    /// which name the subject).
    @Test func theAPITraceShowsAnExportsSizeNeverItsContents() throws {
        let home = try DSRHome()
        let id = try home.verifiedRequest("access")
        let key = home.root.appendingPathComponent("requester.key").path
        #expect(try home.run("/usr/bin/age-keygen", ["-o", key]).status == 0)
        let recipient = try home.run("/usr/bin/age-keygen", ["-y", key]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let sealed = home.root.appendingPathComponent("export.age").path
        let r = try home.dsr(["export", id, "--out", sealed, "--encrypt-to", recipient], environment: ["RAXX_DEBUG": "api"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("/api/dsr/requests/\(id)/export\n"), "\(r.stderr)")
        #expect(
            r.stderr.range(
                of: #"\n< 200 OK \(\d+ ms\)\n(< [^\n]*\n)*<body: [0-9,]+ bytes, personal data not shown>\n"#,
                options: .regularExpression) != nil, "\(r.stderr)")
        #expect(!r.stderr.contains(home.subjectEmail), "\(r.stderr)")
        // The export held the email: the requester's copy opens to it.
        let opened = try home.run("/usr/bin/age", ["-d", "-i", key, sealed])
        #expect(opened.status == 0 && opened.stdout.contains(home.subjectEmail))
    }

    /// `--passphrase` on a terminal (a pseudo-terminal): asked twice, never shown; two that
    /// differ write nothing and leave the request verified.
    @Test func anExportsPassphraseIsAskedOnTheTerminalTwiceAndNotShown() throws {
        let home = try DSRHome(fills: 5)
        let id = try home.verifiedRequest("access")
        let environment = home.environment(home.staffEmail).merging(["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]) { _, b in b }
        func export(_ out: String, typing first: String, then second: String) throws -> (status: Int32, screen: String) {
            let terminal = try TerminalSession("\(BuiltTools.path("raxx-dsr")) export \(id) --out \(out) --passphrase", environment: environment)
            let seen = try terminal.waitFor("Passphrase for the export (at least 12 characters")
            terminal.type(first)
            try terminal.waitFor("Repeat the passphrase: ", after: seen)
            terminal.type(second)
            return terminal.finish()
        }
        let differ = home.root.appendingPathComponent("differ.age").path
        let mismatch = try export(differ, typing: "correct horse battery staple", then: "correct horse battery stapler")
        #expect(mismatch.status == 65, "\(mismatch.screen)")
        #expect(mismatch.screen.contains("The two passphrases do not match."))
        #expect(!FileManager.default.fileExists(atPath: differ))
        #expect(home.lines(try home.dsr(["show", id]).stdout).first?["status"] as? String == "verified")

        let sealed = home.root.appendingPathComponent("export.age").path
        let exported = try export(sealed, typing: "correct horse battery staple", then: "correct horse battery staple")
        #expect(exported.status == 0, "\(exported.screen)")
        #expect(!exported.screen.contains("horse"), "\(exported.screen)")
        let header = String(decoding: try Data(contentsOf: URL(fileURLWithPath: sealed)).prefix(40), as: UTF8.self)
        #expect(header.hasPrefix("age-encryption.org/v1\n-> scrypt "), "\(header)")
        #expect(home.lines(try home.dsr(["show", id]).stdout).first?["status"] as? String == "completed")
    }

    /// An export that could not be written leaves the request verified, to export again: it is
    /// completed only once its file is written and synced.
    @Test func aFailedExportDoesNotCompleteTheRequest() throws {
        let home = try DSRHome(fills: 5)
        let id = try home.verifiedRequest("access")
        let out = home.root.appendingPathComponent("taken.json").path
        try Data("someone else's file\n".utf8).write(to: URL(fileURLWithPath: out))
        let failed = try home.dsr(["export", id, "--out", out, "--format", "text"])
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("\(id) is not completed: export it again."), "\(failed.stderr)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "someone else's file\n")
        #expect(home.lines(try home.dsr(["show", id]).stdout).first?["status"] as? String == "verified")
        let retried = try home.dsr(["export", id, "--out", out + ".2"])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(home.lines(try home.dsr(["show", id]).stdout).first?["status"] as? String == "completed")
    }

    @Test func planApplyWithAStepUpErasesEverythingOnceAndSignsAReceipt() throws {
        let home = try DSRHome()
        let token = String(repeating: "c0ffee", count: 11)
        let device = try ToolRunner.run(
            "raxx-notify", ["devices", "add", "--token", token, "--environment", "sandbox"],
            environment: home.environment(home.subjectEmail))
        #expect(device.status == 0, "\(device.stderr)")
        let user = try home.sql("SELECT id FROM users WHERE email = '\(home.subjectEmail)'")
        let account = try home.sql("SELECT id FROM accounts WHERE user_id = '\(user)'")
        let credentials = try home.sql("SELECT id FROM passkeys WHERE user_id = '\(user)'").split(separator: "\n").map(String.init)
        #expect(!credentials.isEmpty)
        let id = try home.verifiedRequest("erasure")
        let planned = try home.dsr(["plan", id])
        #expect(planned.status == 0, "\(planned.stderr)")
        let hash = try #require(home.lines(planned.stdout).first?["plan_hash"] as? String)
        // The subject trades after the plan: the plan is stale.
        let order = try ToolRunner.run(
            "raxx-order", ["place", "--symbol", "AAPL", "--side", "buy", "--qty", "1"],
            environment: home.environment(home.subjectEmail))
        #expect(order.status == 0, "\(order.stderr)")
        let stale = try home.dsr(
            ["apply", id, "--plan-hash", hash, "--confirm", home.subjectEmail, "--pin-fd", "0", "--format", "text"],
            input: DSRHome.pin)
        #expect(stale.status == 75)
        #expect(stale.stderr.contains("The plan is stale"))
        let fresh = try #require(home.lines(try home.dsr(["plan", id]).stdout).first?["plan_hash"] as? String)
        #expect(fresh != hash)
        let applied = try home.dsr(["apply", id, "--plan-hash", fresh, "--confirm", home.subjectEmail, "--pin-fd", "0"], input: DSRHome.pin)
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(home.lines(applied.stdout).first?["status"] as? String == "completed")
        // No table holds the subject's email, credential ids, device token or account id.
        let dump = try home.sql(".dump")
        for identifier in [home.subjectEmail, user, account, token] + credentials {
            #expect(!dump.contains(identifier), "the database still holds \(identifier)")
        }
        #expect(try home.sql("SELECT COUNT(*) FROM audit_events WHERE actor LIKE 'psn_%' OR subject LIKE 'psn_%'") != "0")
        // The subject's tools: sign in again.
        let whoami = try ToolRunner.run("raxx-auth", ["whoami"], environment: home.environment(home.subjectEmail))
        #expect(whoami.status == 4)
        // The subject was told of each step, the erasure last.
        let told = home.sandbox.mailbox.messages(to: home.subjectEmail).filter { $0.subject == "Your Raxx data request \(id)" }
        #expect(told.first?.body.contains("We received your request to erase") == true)
        #expect(told.last?.body.contains("Your personal data was erased") == true)
        // Applying again changes nothing, and says so.
        let twice = try home.dsr(["apply", id, "--plan-hash", fresh, "--confirm", home.subjectEmail])
        #expect(twice.status == 0)
        #expect(home.lines(twice.stdout).first?["already_completed"] as? Bool == true)
        // The receipt verifies offline, and not once a byte changes.
        let receipt = try home.dsr(["receipt", id])
        #expect(receipt.status == 0, "\(receipt.stderr)")
        let file = home.root.appendingPathComponent("receipt.json")
        try Data(receipt.stdout.utf8).write(to: file)
        home.sandbox.stop()
        let verified = try home.dsr(["verify-receipt", file.path])
        #expect(verified.status == 0, "\(verified.stderr)")
        var bytes = Array(receipt.stdout.utf8)
        let at = try #require(receipt.stdout.range(of: "\"rows\":")).upperBound
        let offset = receipt.stdout.utf8.distance(from: receipt.stdout.startIndex, to: at)
        bytes[offset] = bytes[offset] == UInt8(ascii: "9") ? UInt8(ascii: "8") : bytes[offset] + 1
        try Data(bytes).write(to: file)
        let tampered = try home.dsr(["verify-receipt", file.path, "--format", "text"])
        #expect(tampered.status == 1)
        #expect(tampered.stderr.contains("does not verify"))

        // Content added around the signed bytes, as an attacker would try: a field inside the
        // receipt (a lenient decoder drops it, so the signature still held), a second "receipt"
        // key after the signed one (which jq and Python read), and a document after the receipt.
        let signed = receipt.stdout.hasSuffix("\n") ? String(receipt.stdout.dropLast()) : receipt.stdout
        let forged = #"{"completed_at":"2020-01-01T00:00:00Z","items":[],"plan_hash":"x","request_id":"\#(id)","subject_hash":"x"}"#
        for (what, text, status, says) in [
            (
                "a field added inside", signed.replacingOccurrences(of: #""receipt":{"#, with: #""receipt":{"note":"nothing was erased","#),
                Int32(1), "not exactly the signed receipt"
            ),
            ("a second receipt key", String(signed.dropLast()) + #","receipt":"# + forged + "}", 1, "not exactly the signed receipt"),
            ("trailing bytes", signed + " ", 1, "not exactly the signed receipt"),
            // Not one JSON document at all: not a receipt (65).
            ("a document after it", signed + "\n" + #"{"receipt":"# + forged + "}\n", 65, "not a raxx-dsr receipt"),
        ] {
            try Data(text.utf8).write(to: file)
            let added = try home.dsr(["verify-receipt", file.path])
            #expect(added.status == status, "\(what): \(added.stdout)")
            #expect(added.stdout.isEmpty, "\(what)")
            #expect(added.stderr.contains(says), "\(what): \(added.stderr)")
        }
        // The receipt as printed still verifies.
        try Data(receipt.stdout.utf8).write(to: file)
        #expect(try home.dsr(["verify-receipt", file.path]).status == 0)
    }

    /// Erasing bob@x.test through the tool leaves the audit events of jimbob@x.test, whose email
    /// ends with bob's, as they were: the erasure replaces values that are bob's whole.
    @Test func anErasureLeavesAnotherAccountWhoseEmailEndsWithTheSubjectsAlone() throws {
        let home = try DSRHome(fills: 5, subjectEmail: "bob@x.test", others: ["jimbob@x.test"])
        let jim = try home.sql("SELECT id FROM users WHERE email = 'jimbob@x.test'")
        let id = try home.verifiedRequest("erasure")
        let hash = try #require(home.lines(try home.dsr(["plan", id]).stdout).first?["plan_hash"] as? String)
        let last = try home.sql("SELECT MAX(seq) FROM audit_events")
        func jims() throws -> String {
            try home.sql(
                """
                SELECT seq, actor, action, subject, details FROM audit_events
                WHERE seq <= \(last) AND (actor IN ('\(jim)', 'jimbob@x.test')
                      OR subject IN ('\(jim)', 'jimbob@x.test', (SELECT id FROM accounts WHERE user_id = '\(jim)')))
                ORDER BY seq
                """)
        }
        let before = try jims()
        #expect(before.contains("|registration.code_sent|jimbob@x.test|"), "\(before)")
        #expect(before.contains("|passkey.registered|\(jim)|"), "\(before)")
        let applied = try home.dsr(["apply", id, "--plan-hash", hash, "--confirm", home.subjectEmail, "--pin-fd", "0"], input: DSRHome.pin)
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(home.lines(applied.stdout).first?["status"] as? String == "completed")
        #expect(try jims() == before)
        #expect(try home.sql("SELECT COUNT(*) FROM audit_events WHERE subject = 'bob@x.test'") == "0")
        #expect(!(try home.sql(".dump")).contains("jimpsn_"))
        // Jimbob still signs in as himself.
        let whoami = try ToolRunner.run("raxx-auth", ["whoami"], environment: home.environment("jimbob@x.test"))
        #expect(whoami.status == 0, "\(whoami.stderr)")
    }

    @Test func aCrashMidChunksThenApplyAgainCompletes() throws {
        let home = try DSRHome(sandboxArguments: ["--erasure-chunk-rows", "4", "--erasure-chunk-pause", "300ms"], fills: 60)
        let id = try home.verifiedRequest("erasure")
        let hash = try #require(home.lines(try home.dsr(["plan", id]).stdout).first?["plan_hash"] as? String)
        let user = try home.sql("SELECT id FROM users WHERE email = '\(home.subjectEmail)'")
        let account = try home.sql("SELECT id FROM accounts WHERE user_id = '\(user)'")
        let fills = Int(try home.sql("SELECT COUNT(*) FROM fills WHERE account_id = '\(account)'")) ?? 0
        #expect(fills >= 40)
        // Apply in the background; once some chunks are done and some are not, kill -9 the sandbox.
        let finished = DispatchSemaphore(value: 0)
        Thread {
            _ = try? home.dsr(["apply", id, "--plan-hash", hash, "--confirm", home.subjectEmail, "--pin-fd", "0"], input: DSRHome.pin)
            finished.signal()
        }.start()
        var midway = false
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            let left = Int(try home.sql("SELECT COUNT(*) FROM fills WHERE account_id = '\(account)'")) ?? fills
            if left < fills, left > 0 { midway = true; break }
            usleep(50_000)
        }
        #expect(midway, "the erasure never reached its chunks")
        home.sandbox.crash()
        _ = finished.wait(timeout: .now() + 60)
        #expect(try home.sql("SELECT status FROM dsr_requests WHERE id = '\(id)'") == "erasing")
        #expect(try home.sql("SELECT COUNT(*) FROM sessions WHERE user_id = '\(user)'") == "0")
        try home.sandbox.restart()
        let again = try home.dsr(["apply", id, "--plan-hash", hash, "--confirm", home.subjectEmail, "--pin-fd", "0"], input: DSRHome.pin)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(home.lines(again.stdout).first?["status"] as? String == "completed")
        #expect(try home.sql("SELECT COUNT(*) FROM fills WHERE account_id = '\(account)'") == "0")
        #expect(try home.sql("SELECT COUNT(*) FROM accounts WHERE id = '\(account)'") == "0")
        #expect(!(try home.sql(".dump")).contains(home.subjectEmail))
    }

    @Test func deadlinesThroughTheTool() throws {
        let home = try DSRHome(fills: 0)
        let opened = try home.dsr(["open", "--email", home.subjectEmail, "--kind", "access", "--ticket", "T-1", "--received-at", "2026-01-31"])
        #expect(opened.status == 0, "\(opened.stderr)")
        let request = try #require(home.lines(opened.stdout).first)
        #expect(request["due_on"] as? String == "2026-02-28")
        // Its first month is long over: no extension, and it is overdue (cron mails it: exit 1).
        let id = try #require(request["id"] as? String)
        let extend = try home.dsr(["extend", id, "--reason", "complex", "--format", "text"])
        #expect(extend.status == 1)
        #expect(extend.stderr.contains("first month"))
        let overdue = try home.dsr(["list", "--overdue"])
        #expect(overdue.status == 1)
        #expect(home.lines(overdue.stdout).map { $0["id"] as? String } == [id])
        // A fresh request extends once, not twice.
        let fresh = try #require(
            home.lines(try home.dsr(["open", "--email", home.subjectEmail, "--kind", "erasure", "--ticket", "T-2"]).stdout)
                .first?["id"] as? String)
        #expect(try home.dsr(["extend", fresh, "--reason", "numerous requests"]).status == 0)
        #expect(try home.dsr(["extend", fresh, "--reason", "again"]).status == 1)
        // The subject is emailed of the request and of its extension, with the reason and the new date.
        let notices = home.sandbox.mailbox.messages(to: home.subjectEmail).filter { $0.subject == "Your Raxx data request \(fresh)" }
        #expect(notices.count == 2)
        #expect(notices.last?.body.contains("extended to") == true && notices.last?.body.contains("because: numerous requests") == true)
        #expect(try home.dsr(["open", "--email", "nope", "--kind", "access", "--ticket", "T"]).status == 65)
        #expect(try home.dsr(["show", "dsr_unknown"]).status == 1)
        // Own trail and staff view of it.
        let activity = try ToolRunner.run("raxx-auth", ["activity"], environment: home.environment(home.subjectEmail))
        #expect(activity.status == 0)
        #expect(home.lines(activity.stdout).contains { $0["action"] as? String == "session.started" })
        // The subject sees the staff member's role, staff see the person.
        let openedEvent = home.lines(activity.stdout).first { $0["action"] as? String == "dsr.opened" }
        #expect(openedEvent?["actor"] as? String == "support staff")
        #expect((openedEvent?["details"] as? [String: Any])?["staff"] as? String == "support staff")
        #expect(!activity.stdout.contains(home.staffEmail))
        let audit = try home.dsr(["audit", "--email", home.subjectEmail])
        #expect(audit.status == 0)
        #expect(home.lines(audit.stdout).contains { $0["action"] as? String == "dsr.opened" })
        #expect(audit.stdout.contains(home.staffEmail))
    }
}

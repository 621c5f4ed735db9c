import Foundation
import RaxxCore
import RaxxTestSupport
import Testing

/// A throw-away RAXX_HOME with its own machine identity, and a sandbox to sign in to.
final class AuthHome: @unchecked Sendable {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-e2e-auth-\(UUID().uuidString)")
    let sandbox: SandboxProcess

    init(sandboxArguments: [String] = [], database: String = ":memory:") throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "aaaabbbbccccddddeeeeffff00001111\n".write(to: root.appendingPathComponent("machine-id"), atomically: true, encoding: .utf8)
        sandbox = try SandboxProcess(arguments: sandboxArguments, database: database)
    }

    deinit {
        sandbox.stop()
        try? FileManager.default.removeItem(at: root)
    }

    var keystore: URL { root.appendingPathComponent("home/state/keystore") }

    var environment: [String: String] {
        [
            "RAXX_HOME": root.appendingPathComponent("home").path, "RAXX_API_URL": sandbox.url,
            "RAXX_MACHINE_ID_FILE": root.appendingPathComponent("machine-id").path,
        ]
    }

    /// raxx-auth with the PIN on stdin (--pin-fd 0) when `pin` is given; `register` as a person
    /// runs it, with the code the sandbox emailed (`SandboxProcess.register`).
    /// With `rawPIN`, the PIN goes on stdin as it is, nothing else: a run that no code reaches.
    func auth(_ arguments: [String], pin: String? = nil, environment extra: [String: String] = [:], rawPIN: String? = nil) throws -> ToolResult {
        if let rawPIN {
            return try ToolRunner.run("raxx-auth", arguments, environment: environment.merging(extra) { _, new in new }, input: rawPIN + "\n")
        }
        if arguments.first == "register", let pin, let at = arguments.firstIndex(of: "--email"), at + 1 < arguments.count {
            let rest = arguments.indices.filter { ![0, at, at + 1].contains($0) }.map { arguments[$0] }
            return try sandbox.register(arguments[at + 1], pin: pin, arguments: rest, environment: environment.merging(extra) { _, new in new })
        }
        return try ToolRunner.run(
            "raxx-auth", arguments + (pin == nil ? [] : ["--pin-fd", "0"]),
            environment: environment.merging(extra) { _, new in new }, input: pin.map { $0 + "\n" })
    }

    func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }
}

@Suite(.serialized, .blocking) struct AuthEndToEndTests {
    // MARK: Proof of email

    /// Whoever reaches the sandbox first used to claim any seeded account, staff included. Now the
    /// first passkey needs the code emailed to the account: an attacker who cannot read that email
    /// gets nowhere, with no code, a guessed one, or one guessed at each of five tries.
    @Test func aSeededAccountIsClaimedOnlyWithTheCodeEmailedToIt() throws {
        let database = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-e2e-claim-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) } }
        let seed = try ToolRunner.run(
            "raxx-sandbox", ["seed", "--db", database, "--email", "staff@example.com", "--positions", "0", "--fills", "0", "--staff"])
        #expect(seed.status == 0, "\(seed.stderr)")
        let home = try AuthHome(database: database)
        // No code at all: the code went to the account's email, and there is no terminal to ask on.
        let none = try home.auth(["register", "--email", "staff@example.com", "--pin-fd", "0"], environment: [:], rawPIN: "246813")
        #expect(none.status == 64, "\(none.stderr)")
        #expect(none.stderr.contains("emailed a one-time code"))
        // Guesses, each on a new run (each sends a new code).
        for guess in ["00000000", "12345678"] {
            let guessed = try ToolRunner.run(
                "raxx-auth", ["register", "--email", "staff@example.com", "--code-fd", "0", "--pin-fd", "0", "--json"],
                environment: home.environment, input: guess + "\n246813\n")
            #expect(guessed.status == 65, "\(guessed.stderr)")
            #expect(guessed.stderr.contains("code_invalid"), "\(guessed.stderr)")
        }
        #expect(try home.auth(["login", "--email", "staff@example.com"], pin: "246813").status != 0)
        // The codes went to the account's owner, with what to do if it was not them.
        let mail = home.sandbox.mailbox.messages(to: "staff@example.com")
        #expect(mail.count == 3)
        #expect(mail.allSatisfy { $0.code != nil && $0.body.contains("ignore this email") })
        // The owner, reading the email, claims it.
        let owner = try home.auth(["register", "--email", "staff@example.com"], pin: "246813")
        #expect(owner.status == 0, "\(owner.stderr)")
        #expect(home.json(try home.auth(["whoami"]).stdout)["account"] as? String == "staff@example.com")
    }

    /// Two devices of one account: each registered with the emailed code, listed with this
    /// device's marked; one removed from the other with a step-up (and the account is told); the
    /// last one is never removed.
    @Test func passkeysAreListedAndRemovedWithAStepUpButNeverTheLast() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "two@example.com"], pin: "246813").status == 0)
        let laptop = ["RAXX_HOME": home.root.appendingPathComponent("laptop").path]
        #expect(try home.auth(["register", "--email", "two@example.com"], pin: "135791", environment: laptop).status == 0)
        let list = try home.auth(["passkeys", "list"])
        #expect(list.status == 0, "\(list.stderr)")
        let records = list.stdout.split(separator: "\n").map { home.json(String($0)) }
        #expect(records.count == 2)
        #expect(records.map { $0["this_device"] as? Bool } == [true, false])
        let other = try #require(records.last?["id"] as? String), mine = try #require(records.first?["id"] as? String)
        // From the laptop: its own list marks the other one.
        #expect(
            home.json(String(try home.auth(["passkeys", "list"], environment: laptop).stdout.split(separator: "\n").last ?? ""))["this_device"]
                as? Bool == true)
        // A wrong PIN removes nothing.
        #expect(try home.auth(["passkeys", "remove", other, "--pin-fd", "0"], environment: [:], rawPIN: "999999").status != 0)
        let removed = try home.auth(["passkeys", "remove", other, "--pin-fd", "0"], environment: [:], rawPIN: "246813")
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(home.json(removed.stdout)["removed"] as? Bool == true)
        #expect(home.sandbox.mailbox.messages(to: "two@example.com").last?.subject == "A passkey was removed from your Raxx account")
        let left = try home.auth(["passkeys", "list"])
        #expect(left.stdout.split(separator: "\n").map { home.json(String($0))["id"] as? String } == [mine])
        // The last one stays.
        let last = try home.auth(["passkeys", "remove", mine, "--pin-fd", "0", "--format", "text"], environment: [:], rawPIN: "246813")
        #expect(last.status == 77, "\(last.stderr)")
        #expect(last.stderr.contains("only passkey"))
        #expect(try home.auth(["passkeys", "list"]).stdout.split(separator: "\n").count == 1)
    }

    /// Where the account is signed in: both devices' sessions, each device's own marked; one
    /// signed out is no longer listed, and signed out, the list is refused before asking.
    @Test func sessionsListWhereTheAccountIsSignedIn() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "where@example.com"], pin: "246813").status == 0)
        let laptop = ["RAXX_HOME": home.root.appendingPathComponent("laptop").path]
        #expect(try home.auth(["register", "--email", "where@example.com"], pin: "135791", environment: laptop).status == 0)
        let list = try home.auth(["sessions"])
        #expect(list.status == 0, "\(list.stderr)")
        let records = list.stdout.split(separator: "\n").map { home.json(String($0)) }
        #expect(records.map { $0["this_device"] as? Bool } == [true, false])
        // RFC 3339, with milliseconds when there are some.
        let whole = ISO8601DateFormatter(), fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func time(_ value: Any?) -> Date? { (value as? String).flatMap { fractional.date(from: $0) ?? whole.date(from: $0) } }
        for record in records {
            let created = try #require(time(record["created_at"]))
            let ends = try #require(time(record["expires_at"]))
            #expect(created < ends)
        }
        let fromLaptop = try home.auth(["sessions"], environment: laptop).stdout.split(separator: "\n").map { home.json(String($0)) }
        #expect(fromLaptop.map { $0["id"] as? String } == records.map { $0["id"] as? String })
        #expect(fromLaptop.map { $0["this_device"] as? Bool } == [false, true])
        // Signed out on the laptop: one session left, and the laptop's list asks nothing.
        #expect(try home.auth(["logout"], environment: laptop).status == 0)
        let left = try home.auth(["sessions"]).stdout.split(separator: "\n").map { home.json(String($0))["id"] as? String }
        #expect(left == [records.first?["id"] as? String])
        #expect(try home.auth(["sessions"], environment: laptop).status == 4)
    }

    /// A passkey's id is base64url, and one in sixty-four begins with a dash (as one did in CI).
    /// The tool once read it as a cluster of one-letter flags: any "h" in it printed help and
    /// exited 0, having removed nothing. Now it is the id, wherever it stands, and reaches the
    /// server: here one that no passkey has, refused as such.
    @Test func aPasskeyIDThatBeginsWithADashIsTheID() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "dash@example.com"], pin: "246813").status == 0)
        let unknown = "-kh" + String(repeating: "A", count: 40)
        for arguments in [["passkeys", "remove", unknown, "--pin-fd", "0", "--json"], ["passkeys", "remove", "--pin-fd", "0", "--json", unknown]] {
            let removal = try home.auth(arguments, environment: [:], rawPIN: "246813")
            #expect(removal.status == 1, "\(arguments): \(removal.stderr)")
            #expect(removal.stdout.isEmpty, "\(removal.stdout)")
            #expect(
                home.json(removal.stderr)["error"].flatMap { ($0 as? [String: Any])?["message"] as? String }
                    == "No passkey \(unknown) on this account.", "\(removal.stderr)")
        }
        #expect(try home.auth(["passkeys", "list"]).stdout.split(separator: "\n").count == 1)
    }

    /// Five wrong PINs lock this device's passkey; the way back is the emailed code: forget the
    /// device, register again with the code, and the same account has a new passkey (and is told).
    @Test func aLockedPasskeyIsRecoveredWithTheEmailedCode() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        let account = home.json(try home.auth(["whoami"]).stdout)["account_id"] as? String
        #expect(try home.auth(["logout"]).status == 0)
        for _ in 1...5 { _ = try home.auth(["login", "--format", "text"], pin: "999999") }
        let locked = try home.auth(["login", "--format", "text"], pin: "246813")
        #expect(locked.status == 77, "\(locked.stderr)")
        #expect(locked.stderr.contains("logout --forget-device, then raxx-auth register again"))
        #expect(try home.auth(["logout", "--forget-device"]).status == 0)
        let again = try home.auth(["register", "--email", "t@example.com"], pin: "135791")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(home.json(try home.auth(["whoami"]).stdout)["account_id"] as? String == account)
        let notice = home.sandbox.mailbox.messages(to: "t@example.com").last
        #expect(notice?.subject == "A passkey was added to your Raxx account")
        #expect(notice?.body.contains("recovery") == true)
    }

    @Test func registerStatusWhoamiLogout() throws {
        let home = try AuthHome()
        let register = try home.auth(["register", "--email", "trader@example.com"], pin: "246813")
        #expect(register.status == 0, "\(register.stderr)")
        #expect(home.json(register.stdout)["signed_in"] as? Bool == true)
        #expect(!register.stdout.contains("access_token") && !register.stdout.contains("renewal"))

        let status = try home.auth(["status"])
        #expect(status.status == 0)
        let record = home.json(status.stdout)
        #expect(record["account"] as? String == "trader@example.com")
        #expect(record["authenticator"] as? String == "software (P-256, PIN-protected)")
        #expect(record["keystore"] as? String == home.keystore.path)

        let whoami = try home.auth(["whoami"])
        #expect(whoami.status == 0)
        #expect(home.json(whoami.stdout)["mode"] as? String == "paper")

        let logout = try home.auth(["logout"])
        #expect(logout.status == 0)
        #expect(home.json(logout.stdout)["revoked_on_server"] as? Bool == true)
        let after = try home.auth(["status"])
        #expect(after.status == 4)
        #expect(after.stderr.contains("Not signed in to \(home.sandbox.url)."))

        let login = try home.auth(["login"], pin: "246813")
        #expect(login.status == 0)
        #expect(try home.auth(["status"]).status == 0)
    }

    @Test func aWrongPINIsNotPermittedAndSignsNothingIn() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        #expect(try home.auth(["logout"]).status == 0)
        let wrong = try home.auth(["login", "--format", "text"], pin: "000000")
        #expect(wrong.status == 77)
        #expect(wrong.stdout.isEmpty)
        #expect(wrong.stderr.hasPrefix("raxx-auth: Wrong PIN.\nhint: 4 attempts left"))
        #expect(try home.auth(["status"]).status == 4)
    }

    /// On a terminal (a pseudo-terminal), as a person signs in: a wrong PIN is said with the
    /// attempts left and asked again; nothing typed is shown.
    @Test func aWrongPINOnATerminalIsAskedAgain() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        #expect(try home.auth(["logout"]).status == 0)
        let terminal = try TerminalSession(
            "\(BuiltTools.path("raxx-auth")) login",
            environment: home.environment.merging(["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]) { _, b in b })
        var seen = try terminal.waitFor("PIN: ")
        terminal.type("000000")
        seen = try terminal.waitFor("Wrong PIN. 4 attempts left before the passkey locks.", after: seen)
        try terminal.waitFor("PIN: ", after: seen)
        terminal.type("246813")
        let (status, screen) = terminal.finish()
        #expect(status == 0, "\(screen)")
        #expect(!screen.contains("000000") && !screen.contains("246813"), "\(screen)")
        #expect(try home.auth(["status"]).status == 0)
    }

    /// Registering on a terminal as a person does, with slips: an empty Enter and a wrong code
    /// are asked again (one mail, the same code), and a PIN under six characters is refused as it
    /// is typed the first time, then asked again; before, each ended the command.
    @Test func registrationOnATerminalForgivesASlip() throws {
        let home = try AuthHome()
        let email = "slip@example.com"
        let terminal = try TerminalSession(
            "\(BuiltTools.path("raxx-auth")) register --email \(email)",
            environment: home.environment.merging(["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]) { _, b in b })
        var seen = try terminal.waitFor("Code from the email: ")
        let code = try #require(home.sandbox.mailbox.messages(to: email).last?.code)
        terminal.type("")
        seen = try terminal.waitFor("the code is 8 digits", after: seen)
        seen = try terminal.waitFor("Code from the email: ", after: seen)
        terminal.type(code == "11111111" ? "22222222" : "11111111")
        seen = try terminal.waitFor("That is not the code we emailed.", after: seen)
        seen = try terminal.waitFor("Code from the email: ", after: seen)
        terminal.type(code)
        seen = try terminal.waitFor("Choose a PIN", after: seen)
        terminal.type("123")
        seen = try terminal.waitFor("A new passkey's PIN has 6 to 64 characters. Try again.", after: seen)
        seen = try terminal.waitFor("Choose a PIN", after: seen)
        terminal.type("246813")
        seen = try terminal.waitFor("Repeat the PIN: ", after: seen)
        terminal.type("246813")
        let (status, screen) = terminal.finish()
        #expect(status == 0, "\(screen)")
        #expect(!screen.contains("246813") && !screen.contains("123\r"), "\(screen)")
        #expect(home.sandbox.mailbox.messages(to: email).filter { $0.subject == "Your Raxx registration code" }.count == 1)
        #expect(try home.auth(["status"]).status == 0)
    }

    @Test func anExpiredAccessTokenIsRenewedWithoutAPerson() throws {
        let home = try AuthHome(sandboxArguments: ["--token-ttl", "1s", "--session-ttl", "5m"])
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        let before = try Data(contentsOf: home.keystore)
        #expect(try ToolRunner.waitUntil(.accessToken, environment: home.environment))
        let whoami = try home.auth(["whoami"])  // no PIN given: renewal needs none
        #expect(whoami.status == 0, "\(whoami.stderr)")
        #expect(try Data(contentsOf: home.keystore) != before)
    }

    @Test func anEndedSessionExits4() throws {
        let home = try AuthHome(sandboxArguments: ["--token-ttl", "1s", "--session-ttl", "2s"])
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        #expect(try ToolRunner.waitUntil(.session, environment: home.environment))
        let whoami = try home.auth(["whoami", "--format", "text"])
        #expect(whoami.status == 4)
        #expect(whoami.stderr == "raxx-auth: Sign in again: raxx-auth login\n")
        #expect(try home.auth(["status"]).status == 4)
    }

    @Test func aTamperedKeystoreIsDamagedAndKept() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        var bytes = try Data(contentsOf: home.keystore)
        bytes[bytes.count / 2] ^= 0x20
        try bytes.write(to: home.keystore)
        let status = try home.auth(["status", "--format", "text"])
        #expect(status.status == 1)
        #expect(status.stderr.contains("is damaged"))
        let login = try home.auth(["login"], pin: "246813")
        #expect(login.status == 1)
        #expect(try Data(contentsOf: home.keystore) == bytes)  // never silently replaced
    }

    @Test func aKeystoreFromAnotherMachineDoesNotOpen() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        let other = home.root.appendingPathComponent("other-machine-id")
        try "99998888777766665555444433332222\n".write(to: other, atomically: true, encoding: .utf8)
        let status = try home.auth(["status", "--format", "text"], environment: ["RAXX_MACHINE_ID_FILE": other.path])
        #expect(status.status == 1)
        #expect(status.stderr.contains("sealed on another machine"))
    }

    @Test func aKeystoreOthersCanReadIsRefused() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        chmod(home.keystore.path, 0o644)
        let status = try home.auth(["status", "--format", "text"])
        #expect(status.status == 1)
        #expect(status.stderr.contains("hint: Fix it with: chmod 600 \(home.keystore.path)"))
    }

    @Test func offlineRegistrationSendsNothingAndWritesNothing() throws {
        let home = try AuthHome()
        let listener = try LoopbackListener(.refuse)
        let r = try home.auth(
            ["register", "--email", "t@example.com", "--format", "text"], pin: "246813",
            environment: ["RAXX_API_URL": listener.url])
        #expect(r.status == 69)
        #expect(r.stderr.hasPrefix("raxx-auth: This action requires an internet connection. Try again when online.\n"))
        #expect(!FileManager.default.fileExists(atPath: home.keystore.path))
    }

    @Test func offlineLogoutWipesLocallyAndSaysWhenTheServerSessionLapses() throws {
        let home = try AuthHome()
        #expect(try home.auth(["register", "--email", "t@example.com"], pin: "246813").status == 0)
        home.sandbox.stop()  // the server's address refuses connections
        let r = try home.auth(["logout"])
        #expect(r.status == 0)
        #expect(home.json(r.stdout)["revoked_on_server"] as? Bool == false)
        #expect(r.stderr.contains("its session will lapse by itself at"))
        #expect(try home.auth(["status"]).status == 4)
    }
}

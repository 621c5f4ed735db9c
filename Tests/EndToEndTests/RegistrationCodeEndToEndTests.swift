import Foundation
import RaxxCore
import RaxxTestSupport
import Testing

/// The emailed registration codes tried as an attacker would, over HTTP against a running sandbox
/// (curl, no client library in between), and what the person sees in `raxx-auth register`.
@Suite(.serialized, .blocking) struct RegistrationCodeEndToEndTests {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: [String: Any]
        var code: String? { body["code"] as? String }
    }

    /// POSTs `json` to the sandbox's register options, as anyone on the network can.
    static func ask(_ sandbox: SandboxProcess, _ json: [String: Any]) throws -> Answer {
        let body = try JSONSerialization.data(withJSONObject: json)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-ask-\(UUID().uuidString).json")
        try body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (_, out) = try ToolRunner.system(
            "/usr/bin/curl",
            [
                "-s", "-D", "-", "-H", "Content-Type: application/json", "--data-binary", "@" + file.path,
                sandbox.url + "/api/auth/register/options",
            ])
        let parts = out.components(separatedBy: "\r\n\r\n")
        let head = parts.first?.components(separatedBy: "\r\n") ?? []
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let text = parts.dropFirst().joined(separator: "\r\n\r\n")
        return Answer(
            status: status, headers: headers,
            body: (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:])
    }

    static func wrong(_ code: String?) -> String { code == "11111111" ? "22222222" : "11111111" }

    /// Before: each ask replaced the address's code with a new one and five new tries, so eight
    /// asks gave 32 wrong guesses. Now guesses are counted per address: nine are answered, then
    /// 429 with Retry-After, the right code included, and `raxx-auth register` says when to try again.
    @Test func askingForNewCodesBuysNoMoreGuesses() throws {
        let home = try AuthHome()
        let victim = "victim@example.com"
        var answers: [String?] = []
        for _ in 0..<4 {
            #expect(try Self.ask(home.sandbox, ["email": victim]).status == 202)
            let code = home.sandbox.mailbox.messages(to: victim).last?.code
            for _ in 0..<5 { answers.append(try Self.ask(home.sandbox, ["email": victim, "code": Self.wrong(code)]).code) }
        }
        #expect(answers.filter { $0 == "code_invalid" }.count == 9, "\(answers)")
        #expect(answers.dropFirst(9).allSatisfy { $0 == "rate_limited" }, "\(answers)")
        let code = try #require(home.sandbox.mailbox.messages(to: victim).last?.code)
        let refused = try Self.ask(home.sandbox, ["email": victim, "code": code])
        #expect(refused.status == 429 && refused.code == "rate_limited")
        let wait = try #require(refused.headers["retry-after"].flatMap { Int($0) })
        #expect((1...600).contains(wait) && refused.body["retry_after"] as? Int == wait)
        // Every ask mailed the same live code: asking never replaced it.
        #expect(Set(home.sandbox.mailbox.messages(to: victim).compactMap(\.code)).count == 1)

        // The person, with the right code from the email, is told to wait, not that it is wrong.
        let person = try ToolRunner.run(
            "raxx-auth", ["register", "--email", victim, "--code-fd", "0", "--pin-fd", "0"],
            environment: home.environment, input: code + "\n246813\n")
        #expect(person.status == 75, "\(person.stderr)")
        #expect(person.stderr.contains("Try again in"), "\(person.stderr)")
        #expect(!person.stderr.contains("429"), "\(person.stderr)")
    }

    /// Before: 300 anonymous asks in 4 s wrote 300 emails to one address, and each one voided the
    /// code its owner was about to type. Now an address gets at most 5 mails an hour, all with the
    /// live code, and the owner's code still works; one client's asks are limited too.
    @Test func aFloodOfAsksMailsFiveTimesAndSpoilsNoCode() throws {
        let home = try AuthHome(sandboxArguments: ["--code-asks-per-client", "1000"])
        let owner = "owner@example.com"
        #expect(try Self.ask(home.sandbox, ["email": owner]).status == 202)
        let owners = try #require(home.sandbox.mailbox.messages(to: owner).last?.code)
        var statuses: [Int] = []
        for _ in 0..<100 { statuses.append(try Self.ask(home.sandbox, ["email": owner]).status) }
        #expect(statuses.filter { $0 == 202 }.count == 4 && statuses.filter { $0 == 429 }.count == 96)
        let mails = home.sandbox.mailbox.messages(to: owner)
        #expect(mails.count == 5 && mails.allSatisfy { $0.code == owners })
        let options = try Self.ask(home.sandbox, ["email": owner, "code": owners])
        #expect(options.status == 200 && options.body["challenge"] is String, "\(options.body)")
    }

    @Test func oneClientMayAskThirtyTimesAMinuteByDefault() throws {
        let home = try AuthHome()
        var statuses: [Int] = []
        for i in 0..<40 { statuses.append(try Self.ask(home.sandbox, ["email": "n\(i)@example.com"]).status) }
        #expect(Array(statuses.prefix(30)) == Array(repeating: 202, count: 30))
        #expect(statuses.dropFirst(30).allSatisfy { $0 == 429 })
        #expect(home.sandbox.mailbox.messages().count == 30)
        // The person's tool says when to try again (exit 75), nothing about HTTP.
        let late = try ToolRunner.run(
            "raxx-auth", ["register", "--email", "late@example.com", "--code-fd", "0", "--pin-fd", "0"],
            environment: home.environment, input: "12345678\n246813\n")
        #expect(late.status == 75 && late.stderr.contains("Try again in"), "\(late.stderr)")
    }

    /// Addresses that would break a header or the database: a 900 KB address, control characters,
    /// and one that a mail server reads as two recipients. Each is refused with 400 naming the
    /// field; nothing is stored, nothing mailed.
    @Test func anAddressThatWouldBreakTheMailIsRefusedAndNothingIsMailed() throws {
        let database = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-e2e-mailable-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) } }
        let home = try AuthHome(database: database)
        let huge = String(repeating: "a", count: 900_000) + "@example.com"
        let bad = [
            huge, "nul\u{0}@example.com", "esc\u{1B}[2J@example.com", "back\u{8}space@example.com",
            "evil@attacker.test>,<victim@example.com", "\"quoted\"@example.com", "two@@example.com", "a b@example.com",
            "rtl\u{202E}moc.elpmaxe@example.com", "nodot@example", "dots@example..com",
        ]
        for address in bad {
            let answer = try Self.ask(home.sandbox, ["email": address])
            #expect(answer.status == 400 && answer.code == "bad_request", "\(address.prefix(40)): \(answer.status)")
            #expect((answer.body["detail"] as? String)?.hasPrefix("Field 'email'") == true, "\(answer.body)")
        }
        #expect(home.sandbox.mailbox.messages().isEmpty)
        let rows = try ToolRunner.system(
            "/usr/bin/sqlite3", [database, "SELECT COUNT(*) FROM email_codes; SELECT COUNT(*) FROM audit_events WHERE action LIKE 'registration.%'"])
        #expect(rows.stdout.split(separator: "\n") == ["0", "0"], "\(rows.stdout)")
        // 254 bytes is the limit, in bytes: 250 two-byte letters are too many.
        let wide = String(repeating: "é", count: 125) + "@example.com"
        #expect(wide.count < 254 && wide.utf8.count > 254)
        #expect(try Self.ask(home.sandbox, ["email": wide]).status == 400)
        #expect(try Self.ask(home.sandbox, ["email": "o'brien@example.com"]).status == 202)

        // The tools refuse the same addresses before anything is sent or written.
        let register = try ToolRunner.run(
            "raxx-auth", ["register", "--email", "evil@attacker.test>,<victim@example.com"],
            environment: home.environment)
        #expect(register.status == 64 && register.stderr.contains("--email"), "\(register.stderr)")
        for verb in [["seed", "--positions", "0", "--fills", "0"], ["staff", "grant"]] {
            let run = try ToolRunner.run("raxx-sandbox", verb + ["--db", database, "--email", "esc\u{1B}@example.com"])
            #expect(run.status == 64 && run.stderr.contains("--email"), "\(verb): \(run.stderr)")
        }
    }
}

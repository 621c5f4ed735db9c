import Foundation
import RaxxCLI
import RaxxCore
import RaxxTestSupport
import RaxxWire
import Testing

@Suite struct OutputFormatTests {
    @Test(
        arguments: [
            (nil, false, true, OutputFormat.text), (nil, false, false, .json), (.text, false, false, .text),
            (.json, false, true, .json), (nil, true, true, .json), (.text, true, true, .json),
        ] as [(OutputFormat?, Bool, Bool, OutputFormat)])
    func resolves(format: OutputFormat?, json: Bool, tty: Bool, expected: OutputFormat) {
        #expect(OutputFormat.resolve(format: format, json: json, stdoutIsTTY: tty) == expected)
    }

    @Test func globalOptionsParse() throws {
        #expect(try GlobalOptions.parse(["--json"]).resolvedFormat(stdoutIsTTY: true) == .json)
        #expect(try GlobalOptions.parse(["--format", "text"]).resolvedFormat(stdoutIsTTY: false) == .text)
        #expect(throws: (any Error).self) { try GlobalOptions.parse(["--format", "xml"]) }
    }
}

@Suite struct TableTests {
    /// An emoji or a CJK character takes two columns on a terminal: the columns after it stay put.
    @Test func wideCharactersKeepTheColumnsAligned() {
        #expect(TerminalText.columns("iPhone 📱") == 9 && TerminalText.columns("株式") == 4)
        #expect(TerminalText.columns("👨‍👩‍👧") == 2 && TerminalText.columns("e\u{301}") == 1 && TerminalText.columns("❤️") == 2)
        let table = Table(
            columns: [.init("Label"), .init("Env")],
            rows: [["iPhone 📱", "sandbox"], ["plain", "production"], ["株式", "sandbox"], ["👨‍👩‍👧 family", "x"], ["é", "y"]])
        #expect(
            table.render() == """
                LABEL      ENV
                iPhone 📱  sandbox
                plain      production
                株式       sandbox
                👨‍👩‍👧 family  x
                é          y

                """)
    }

    @Test func padsColumnsAndAlignsNumbersRight() {
        let table = Table(
            columns: [.init("Symbol"), .init("Qty", .right), .init("Note")],
            rows: [["AAPL", "10", "long"], ["AAPL261218C00190000", "-2", ""]])
        #expect(
            table.render() == """
                SYMBOL               QTY  NOTE
                AAPL                  10  long
                AAPL261218C00190000   -2  \n
                """)
    }

    /// Fitted to a width, the least needed columns go first (by importance, else the later
    /// one), elidable values are shortened in the middle, and one column always stays.
    @Test func aTableFitsAWidth() {
        let hash = "hmac-sha256:" + String(repeating: "ab", count: 34)
        let table = Table(
            columns: [
                .init("ID", importance: 10, elidable: true), .init("Kind"), .init("Status", importance: 9),
                .init("Subject", importance: 6, elidable: true), .init("Note"),
            ],
            rows: [["dsr_0mx5h82gt4y0tccsfi23", "erasure", "completed", hash, "a note that is rather long for a table"]])
        #expect(table.fitted(to: 500).render() == table.render())
        let fitted = table.fitted(to: 60)
        #expect(fitted.render().split(separator: "\n").allSatisfy { $0.count <= 60 }, "\(fitted.render())")
        #expect(fitted.columns.map(\.title) == ["ID", "Kind", "Status", "Subject"], "\(fitted.columns.map(\.title))")
        #expect(fitted.rows[0][0] == "dsr_0m…csfi23", "\(fitted.rows[0][0])")
        #expect(fitted.rows[0][3].contains("…") && fitted.rows[0][3].hasPrefix("hmac-s") && fitted.rows[0][3].count == 13)
        #expect(table.fitted(to: 40).columns.map(\.title) == ["ID", "Status", "Subject"])
        #expect(Table(columns: [.init("A")], rows: [[String(repeating: "x", count: 90)]]).fitted(to: 10).columns.count == 1)
    }

    @Test func headerOnlyWhenEmpty() {
        #expect(Table(columns: [.init("A"), .init("B")]).render() == "A  B\n")
    }
}

@Suite struct ReporterTests {
    let error = RaxxError(code: .offline, message: RaxxError.offlineMessage, hint: "No route.")

    @Test func textGoesToStderrWithToolAndHint() {
        #expect(
            Reporter(tool: "raxx-order", format: .text).render(error) == """
                raxx-order: This action requires an internet connection. Try again when online.
                hint: No route.\n
                """)
    }

    @Test func jsonIsOneObjectOnOneLine() {
        #expect(
            Reporter(tool: "raxx-order", format: .json).render(error)
                == #"{"error":{"code":"offline","hint":"No route.","message":"This action requires an internet connection. Try again when online."}}"# + "\n")
    }

    /// An error quoting a 30 MB value shows a thousand characters of it and says how much is left out.
    @Test func whatAnErrorQuotesIsCapped() throws {
        let huge = String(repeating: "A", count: 30_000_000)
        let e = RaxxError.badInput(line: 1, field: "symbol", "'\(huge)' is not a symbol.")
        for format in [OutputFormat.text, .json] {
            let out = Reporter(tool: "raxx-order", format: format).render(e)
            #expect(out.utf8.count < 1_200, "\(format)")
            #expect(out.contains("29999"), "\(format): the count left out")
        }
        let short = RaxxError.usage(String(repeating: "b", count: 1_000))
        #expect(Reporter(tool: "t", format: .text).render(short) == "t: " + String(repeating: "b", count: 1_000) + "\n")
    }

    /// Written directly, the envelope is what JSONLines (JSONEncoder) writes for the same object,
    /// whatever the message quotes.
    @Test func jsonIsWhatTheEncoderWrites() throws {
        struct Envelope: Encodable {
            struct Body: Encodable { var code: String; var message: String; var hint: String? }
            var error: Body
        }
        for (message, hint) in [(#"'a "b" \c' / é 🙂"# + "\n\t\u{0}\u{1f}\u{7f}\u{85}\u{9b}2J", Optional("see /tmp\u{2028}")), ("plain", nil)] {
            let e = RaxxError(code: .badInput, message: message, hint: hint)
            let encoded = try JSONLines.line(Envelope(error: .init(code: e.code, message: message, hint: hint))) + "\n"
            #expect(Reporter(tool: "t", format: .json).render(e) == encoded)
        }
    }

    @Test func jsonWithoutHintOmitsIt() {
        let e = RaxxError.usage("Bad.")
        #expect(Reporter(tool: "t", format: .json).render(e) == #"{"error":{"code":"usage","message":"Bad."}}"# + "\n")
    }

    @Test func reportWritesStderrOnlyAndAnswersTheStatus() throws {
        let world = TestWorld()
        let status = Reporter(tool: "t", format: .json).report(error, to: try world.context(tool: "t", requirement: .offlineCapable, format: .json).io)
        #expect(status == .unavailable)
        #expect(world.stdout.contents.isEmpty)
        #expect(world.stderr.contents.hasPrefix(#"{"error":{"code":"offline""#))
    }
}

@Suite struct CommandContextTests {
    struct Row: Encodable { var symbol: String; var qty: Int }

    @Test func emitsJSONLines() throws {
        let world = TestWorld()
        try world.context(tool: "t", requirement: .offlineCapable, format: .json)
            .emit([Row(symbol: "AAPL", qty: 1), Row(symbol: "SPY", qty: 2)], columns: [.init("Symbol")]) { [$0.symbol] }
        #expect(world.stdout.contents == "{\"qty\":1,\"symbol\":\"AAPL\"}\n{\"qty\":2,\"symbol\":\"SPY\"}\n")
        #expect(world.stderr.contents.isEmpty)
    }

    @Test func emitsATableForText() throws {
        let world = TestWorld()
        try world.context(tool: "t", requirement: .offlineCapable, format: .text)
            .emit([Row(symbol: "AAPL", qty: 1)], columns: [.init("Symbol"), .init("Qty", .right)]) { [$0.symbol, "\($0.qty)"] }
        #expect(world.stdout.contents == "SYMBOL  QTY\nAAPL      1\n")
    }

    @Test func offlineCapableCommandsGetNoAPI() throws {
        let context = try TestWorld().context(tool: "t", requirement: .offlineCapable, format: .json)
        #expect(throws: RaxxError.self) { try context.api() }
        #expect(throws: RaxxError.self) { try context.signedInAPI() }
    }

    @Test func aServiceTheToolDoesNotHaveIsAnError() throws {
        let context = try TestWorld().context(tool: "t", requirement: .offlineCapable, format: .json)
        #expect(throws: RaxxError.self) { let _: Int = try context.service() }
    }

    @Test func liveContextRefusesABadServerURL() {
        do {
            _ = try CommandContext.live(
                tool: "t", requirement: .networkRequired, output: OutputRequest(),
                environment: EnvironmentVariables(["HOME": "/tmp", "RAXX_API_URL": "http://example.com"]))
            Issue.record("accepted plain http to a remote host")
        } catch {
            #expect(error.status == .usage)
        }
    }
}

@Suite struct FileDescriptorSinkTests {
    @Test func aWriteThatFailsIsKeptAsTheSinksFailure() throws {
        let fd = open("/dev/full", O_WRONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        let sink = FileDescriptorSink(fd: fd)
        sink.write("{\"symbol\":\"AAPL\"}\n")
        #expect(sink.failure == nil)  // buffered: nothing tried yet
        sink.flush()
        #expect(sink.failure == "No space left on device")
    }

    @Test func aDescriptorThatIsNotOpenIsAFailureToo() {
        // -1 is never open (a closed number could be reused meanwhile by another test's file).
        let sink = FileDescriptorSink(fd: -1)
        sink.write("lost\n")
        sink.flush()
        #expect(sink.failure == "Bad file descriptor")
    }
}

/// A server's string in a table or a message cannot reorder the terminal's text after it.
@Suite struct BidiNeutralisingTests {
    @Test func overridesEmbeddingsAndIsolatesAreDropped() {
        let evil = "ord-1\u{202E}lleh\u{202C} \u{2066}x\u{2069}\u{202A}\u{202B}\u{202D}\u{2067}\u{2068}"
        #expect(TerminalText.printable(evil) == "ord-1lleh x")
        let table = Table(columns: [.init("Id"), .init("Note")], rows: [[evil, "ok"]]).render()
        #expect(!table.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) })
        // Marks that only shape text stay (a right-to-left name still reads right).
        #expect(TerminalText.printable("שלום \u{200F}") == "שלום \u{200F}")
    }
}

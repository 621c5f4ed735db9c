import ArgumentParser
import RaxxCLI
import Testing

/// A word that begins with one dash but is no option (a passkey's id, in base64url) reaches the
/// parser as a value; everything else reaches it as typed.
@Suite struct CommandLineWordsTests {
    /// A command shaped as the suite's are: one positional value, `--long` options, `-h` for help.
    struct Remove: ParsableCommand {
        @Argument var id: String
        @Option var pinFd: Int32?
        @Flag var json = false
    }

    /// One of the ids that CI's sandbox drew: it begins with a dash and holds an "h".
    static let dashedID = "-k127C-1P-8xxIZZ_6EkXm8r9EhelziNjWJBbPHO1LI"

    @Test func aDashedIDIsTheValueWhereverItStands() throws {
        for words in [
            [Self.dashedID, "--pin-fd", "0"], ["--pin-fd", "0", Self.dashedID], ["--json", Self.dashedID, "--pin-fd", "0"],
            ["--pin-fd", "0", "--", Self.dashedID],
        ] {
            let parsed = try Remove.parse(CommandLineWords.forParser(words))
            #expect(parsed.id == Self.dashedID && parsed.pinFd == 0, "\(words)")
        }
        // The parser alone reads it as a cluster of one-letter flags, and the "h" among them asks
        // for help: what the tool did, exiting 0 with nothing removed.
        do {
            _ = try Remove.parse([Self.dashedID, "--pin-fd", "0"])
            Issue.record("the parser took the dashed id alone")
        } catch {
            #expect(Remove.exitCode(for: error) == .success)
        }
    }

    @Test func optionsHelpAndPlainWordsAreLeftAsTyped() {
        for words in [
            [], ["--json"], ["abc", "--pin-fd", "3"], ["-h"], ["--help"], ["-help"], ["-"], ["--", "-x", "y"],
            ["--format=json", "id"], ["-x"],
        ] {
            #expect(CommandLineWords.forParser(words) == words, "\(words)")
        }
        do {
            _ = try Remove.parse(CommandLineWords.forParser(["-h"]))
            Issue.record("-h parsed as a value")
        } catch {
            #expect(Remove.exitCode(for: error) == .success)
        }
    }

    @Test func dashedValuesGoAfterTheTerminatorInTheirOrderBeforeWhatWasThere() {
        #expect(CommandLineWords.forParser(["-ab", "--json", "-cd"]) == ["--json", "--", "-ab", "-cd"])
        #expect(CommandLineWords.forParser(["-ab", "--", "x", "-cd"]) == ["--", "-ab", "x", "-cd"])
        #expect(CommandLineWords.forParser(["--pin-fd", "0", "-ab", "--", "--json"]) == ["--pin-fd", "0", "--", "-ab", "--json"])
    }
}

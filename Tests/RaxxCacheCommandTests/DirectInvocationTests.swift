import ArgumentParser
import RaxxCLI
import Testing

@testable import RaxxCacheCommand

/// `raxx-cache status` and `show WHAT` with only the global options are built without the argument
/// parser (DirectlyInvocable): exactly as the parser builds them, and nothing else is.
@Suite struct DirectInvocationTests {
    static let recognised: [[String]] = [
        ["status"], ["status", "--json"], ["status", "--format", "json"], ["status", "--format", "text"], ["status", "--format=json"],
        ["show", "portfolio"], ["show", "positions", "--json"], ["show", "fills", "--format", "text"], ["show", "orders", "--format=json"],
        ["show", "positions"],
    ]

    static let leftToTheParser: [[String]] = [
        [], ["--help"], ["-h"], ["help"], ["help", "status"], ["--version"], ["status", "--help"], ["status", "-h"], ["status", "--version"],
        ["status", "--json", "--json"], ["status", "--format", "JSON"], ["status", "--format"], ["status", "--format="], ["status", "extra"],
        ["--json", "status"], ["show"], ["show", "--json", "positions"], ["show", "position"], ["show", "positions", "--limit", "5"],
        ["show", "positions", "--symbol", "AAPL"], ["show", "positions", "--max-age", "1m"], ["show", "orders", "--status", "open"],
        ["show", "positions", "--json", "--help"], ["show", "positions", "--", "--json"], ["refresh"], ["stauts"],
        ["--generate-completion-script", "bash"], ["status", "--experimental-dump-help"], ["status", "--format", "json", "--json"],
    ]

    @Test(arguments: recognised)
    func recognisedShapesAreWhatTheParserBuilds(arguments: [String]) throws {
        let direct = try #require(RaxxCache.direct(arguments[...]))
        let parsed = try #require(try RaxxCache.parseAsRoot(arguments) as? any RaxxCommand)
        #expect(ObjectIdentifier(direct.command) == ObjectIdentifier(type(of: parsed)))
        #expect(direct.live.output == parsed.global.request)
        #expect(direct.live.requirement == parsed.requirement)
        #expect(direct.live.tool == "raxx-cache")
        // A verb run without its value has no option but the global ones (status), or reads only
        // WHAT (show: the direct path runs Show.Reading(what:)); any other was built field by
        // field as the parser builds it.
        #expect(Self.fields(of: direct.parsed ?? parsed) == Self.fields(of: parsed))
        if direct.parsed == nil {
            if let show = parsed as? RaxxCache.Show {
                #expect(show.reading == RaxxCache.Show.Reading(what: show.what))
            } else {
                #expect(parsed is RaxxCache.Status)
            }
        }
    }

    @Test(arguments: leftToTheParser)
    func everythingElseIsLeftToTheParser(arguments: [String]) {
        #expect(RaxxCache.direct(arguments[...]) == nil)
    }

    /// What a command was given, option by option (a new option on these verbs changes the count:
    /// direct() must then set it too, or the command would crash reading it).
    static func fields(of command: any ParsableCommand) -> [String] {
        if let status = command as? RaxxCache.Status {
            #expect(Mirror(reflecting: status).children.count == 1)
            return ["status", "\(status.global.json)", "\(String(describing: status.global.format))"]
        }
        if let show = command as? RaxxCache.Show {
            #expect(Mirror(reflecting: show).children.count == 7)
            return [
                "show", show.what.rawValue, "\(String(describing: show.symbol))", "\(String(describing: show.since))",
                "\(String(describing: show.status))", "\(String(describing: show.limit))", "\(String(describing: show.maxAge))",
                "\(show.global.json)", "\(String(describing: show.global.format))",
            ]
        }
        return ["unexpected \(type(of: command))"]
    }
}

import ArgumentParser
import RaxxCLI
import Testing

@testable import RaxxAuthCommand

/// `raxx-auth status` with only the global options is built without the argument parser
/// (DirectlyInvocable): exactly as the parser builds it, and nothing else is.
@Suite struct DirectInvocationTests {
    static let recognised: [[String]] = [
        ["status"], ["status", "--json"], ["status", "--format", "json"], ["status", "--format", "text"], ["status", "--format=text"],
    ]

    static let leftToTheParser: [[String]] = [
        [], ["--help"], ["help", "status"], ["--version"], ["status", "--help"], ["status", "-h"], ["status", "--json", "--json"],
        ["status", "--format", "yaml"], ["status", "extra"], ["--json", "status"], ["whoami"], ["login"], ["ping", "--json"],
        ["status", "--pin-fd", "3"],
    ]

    @Test(arguments: recognised)
    func recognisedShapesAreWhatTheParserBuilds(arguments: [String]) throws {
        let direct = try #require(RaxxAuth.direct(arguments[...]))
        let parsed = try #require(try RaxxAuth.parseAsRoot(arguments) as? RaxxAuth.Status)
        #expect(ObjectIdentifier(direct.command) == ObjectIdentifier(RaxxAuth.Status.self))
        #expect(direct.parsed == nil)
        #expect(Mirror(reflecting: parsed).children.count == 1, "a new option: direct() must build the verb with it")
        #expect(direct.live.output == parsed.global.request)
        #expect(direct.live.requirement == parsed.requirement)
        #expect(direct.live.tool == "raxx-auth")
    }

    @Test(arguments: leftToTheParser)
    func everythingElseIsLeftToTheParser(arguments: [String]) {
        #expect(RaxxAuth.direct(arguments[...]) == nil)
    }
}

import Foundation
import RaxxAPI
import RaxxAuthCommand
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxTestSupport
import Testing

/// `raxx-auth ping` in-process, over a test world.
@Suite struct PingTests {
    func world() -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.environment["RAXX_API_URL"] = "http://127.0.0.1:9"
        return world
    }

    @Test func declaresItselfNetworkRequired() {
        #expect(RaxxAuth.Ping.connectivity == .networkRequired)
        #expect(RaxxAuth.Ping.configuration.discussion.contains("network-required"))
    }

    @Test func printsOneJSONLineWhenTheServerAnswers() async throws {
        let world = world()
        let clock = try #require(world.clock)
        world.api.onGetHealth { _ in
            clock.advance(by: 0.042)  // the answer takes 42 ms
            return .ok(.init(body: .json(.init(status: .ok, version: "1.2.3", time: Fixtures.now))))
        }
        #expect(try await world.run(RaxxAuth.Ping.self) == .ok)
        #expect(
            world.stdout.contents
                == #"{"api_url":"http://127.0.0.1:9","latency_ms":42,"server_time":"2026-11-21T10:00:00Z","server_version":"1.2.3","status":"ok"}"# + "\n")
        #expect(world.stderr.contents.isEmpty)
        #expect(world.api.calls == [.init(operation: "getHealth", authorization: nil)])
    }

    @Test func offlineExits69WithTheStandardMessageAndNoData() async throws {
        let world = world()
        world.api.onGetHealth { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "Connection refused") }
        #expect(try await world.run(RaxxAuth.Ping.self, ["--format", "text"]) == .unavailable)
        #expect(world.stdout.contents.isEmpty)
        #expect(world.stderr.contents.hasPrefix("raxx-auth: This action requires an internet connection. Try again when online.\n"))
    }

    /// Under cron stdout and stderr are both mail, read by a person: an error is text whatever
    /// stdout is (a pipe here), and JSON only when asked for (--json, --format json, RAXX_ERRORS=json).
    @Test func anErrorIntoAPipeIsTextUnlessJSONWasAskedFor() async throws {
        for (arguments, environment, json) in [
            ([String](), [String: String](), false), (["--json"], [:], true),
            (["--format", "json"], [:], true), ([], ["RAXX_ERRORS": "json"], true),
        ] {
            let world = world()
            for (name, value) in environment { world.environment[name] = value }
            world.api.onGetHealth { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "Connection refused") }
            #expect(try await world.run(RaxxAuth.Ping.self, arguments) == .unavailable)
            #expect(world.stdout.contents.isEmpty)
            if json {
                #expect(world.stderr.contents.hasPrefix(#"{"error":{"code":"offline""#), "\(arguments) \(environment): \(world.stderr.contents)")
            } else {
                #expect(
                    world.stderr.contents.hasPrefix("raxx-auth: This action requires an internet connection. Try again when online.\n"),
                    "\(world.stderr.contents)")
            }
        }
    }

    @Test func aProblemAnswerIsReportedWithoutHTTPCodes() async throws {
        let world = world()
        world.api.onGetHealth { _ in .default(statusCode: 500, Fixtures.problem(500, code: "unavailable", title: "Maintenance.")) }
        #expect(try await world.run(RaxxAuth.Ping.self, ["--json"]) == .unavailable)
        #expect(!world.stderr.contents.contains("500"))
        #expect(world.stderr.contents.hasPrefix(#"{"error":{"code":"unavailable""#))
    }
}

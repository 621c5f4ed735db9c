import ArgumentParser
import Foundation
import RaxxAuthCommand
import RaxxCLI
import RaxxCore
import RaxxTestSupport
import Testing

/// `raxx-auth ping`'s logic in-process, with an injected context.
@Suite struct PingTests {
    func context(_ url: String, format: OutputFormat = .json) throws -> CapturedContext {
        try CapturedContext(tool: "raxx-auth", format: format,
                            environment: ["HOME": "/tmp", "RAXX_API_URL": url, "RAXX_TIMEOUT": "700ms"])
    }

    @Test func declaresItselfNetworkRequired() {
        #expect(RaxxAuth.Ping.connectivity == .networkRequired)
        #expect(RaxxAuth.Ping.configuration.discussion.contains("network-required"))
    }

    @Test func printsOneJSONLineWhenTheServerAnswers() async throws {
        let body = #"{"status":"ok","version":"1.2.3","time":"2026-11-21T10:00:00Z"}"#
        let listener = try LoopbackListener(.respond(status: 200, headers: ["Content-Type": "application/json"], body: body))
        defer { listener.stop() }
        let captured = try context(listener.url)
        let status = await RaxxAuth.Ping.execute(try RaxxAuth.Ping.parse([]), in: captured.context)
        #expect(status == .ok)
        let line = captured.stdout.contents
        #expect(line.hasPrefix(#"{"api_url":"\#(listener.url)","latency_ms":"#))
        #expect(line.hasSuffix(#","server_time":"2026-11-21T10:00:00Z","server_version":"1.2.3","status":"ok"}"# + "\n"))
        #expect(captured.stderr.contents.isEmpty)
    }

    @Test func offlineExits69WithTheStandardMessageAndNoData() async throws {
        let listener = try LoopbackListener(.refuse)
        let captured = try context(listener.url, format: .text)
        let status = await RaxxAuth.Ping.execute(try RaxxAuth.Ping.parse([]), in: captured.context)
        #expect(status == .unavailable)
        #expect(captured.stdout.contents.isEmpty)
        #expect(captured.stderr.contents.hasPrefix("raxx-auth: This action requires an internet connection. Try again when online.\n"))
    }

    @Test func aProblemAnswerIsReportedWithoutHTTPCodes() async throws {
        let body = #"{"code":"unavailable","title":"Maintenance.","status":500}"#
        let listener = try LoopbackListener(.respond(status: 500, headers: ["Content-Type": "application/problem+json"], body: body))
        defer { listener.stop() }
        let captured = try context(listener.url, format: .json)
        let status = await RaxxAuth.Ping.execute(try RaxxAuth.Ping.parse([]), in: captured.context)
        #expect(status == .unavailable)
        #expect(!captured.stderr.contents.contains("500"))
    }
}

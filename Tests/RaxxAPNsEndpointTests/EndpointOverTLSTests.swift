import Foundation
import RaxxAPNs
import Testing

@testable import RaxxAPNsEndpoint

/// The endpoint in process, over real TLS and HTTP/2, with curl (built with nghttp2) as the client.
// check-blocking: exempt, curl runs on a thread of its own (`run` below), never on the pool.
@Suite(.serialized) struct EndpointOverTLSTests {
    let team = Team()

    final class DataBox: @unchecked Sendable { var data = Data() }

    struct Curl: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs curl on a thread of its own (never blocking the cooperative pool), for at most 60 s.
    static func curl(_ arguments: [String]) async throws -> Curl {
        try await run("/usr/bin/curl", ["--silent", "--show-error", "--max-time", "60"] + arguments)
    }

    /// Runs `executable` on a thread of its own (never blocking the cooperative pool).
    static func run(_ executable: String, _ arguments: [String]) async throws -> Curl {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = arguments
                let out = Pipe(), err = Pipe()
                process.standardOutput = out
                process.standardError = err
                do {
                    try process.run()
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                // stderr drains on a thread of its own, so neither pipe can fill up and stall curl.
                let errData = DataBox()
                let errDone = DispatchSemaphore(value: 0)
                Thread {
                    errData.data = err.fileHandleForReading.readDataToEndOfFile()
                    errDone.signal()
                }.start()
                let outData = out.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                errDone.wait()
                continuation.resume(
                    returning: Curl(
                        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                        stderr: String(decoding: errData.data, as: UTF8.self)))
            }.start()
        }
    }

    /// Runs `body` against an endpoint in a folder of its own, then `afterStop` with its log
    /// (complete once the endpoint has stopped), then removes the folder.
    func withEndpoint(
        _ adjust: (inout APNsEndpointConfiguration) -> Void = { _ in },
        _ body: (_ url: String, _ ca: String, _ log: String) async throws -> Void,
        afterStop: (_ log: String) throws -> Void = { _ in }
    ) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("apns-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var configuration = APNsEndpointConfiguration(tlsDirectory: dir + "/tls", teamID: Team.teamID, keys: team.keys)
        configuration.topic = Team.topic
        configuration.logPath = dir + "/log.jsonl"
        configuration.threads = 2
        adjust(&configuration)
        let endpoint = try APNsEndpoint(configuration: configuration)
        let port = try await endpoint.start()
        do {
            try await body("https://127.0.0.1:\(port)", dir + "/tls/ca.pem", dir + "/log.jsonl")
        } catch {
            await endpoint.stop()
            throw error
        }
        await endpoint.stop()
        try afterStop(dir + "/log.jsonl")
    }

    func pushArguments(ca: String, jwt: String, headers: [String] = [], payload: String = #"{"aps":{"alert":"hi"}}"#) -> [String] {
        var arguments = [
            "--http2", "--cacert", ca, "-D", "-", "-X", "POST",
            "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: \(Team.topic)", "-H", "apns-push-type: alert",
            "--data-binary", payload, "-w", "\\n%{http_version} %{http_code}\\n",
        ]
        for header in headers { arguments += ["-H", header] }
        return arguments
    }

    func logLines(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func aPushIsAcceptedOverHTTP2AndRefusalsCarryTheirReason() async throws {
        try await withEndpoint { url, ca, log in
            let mode = try FileManager.default.attributesOfItem(atPath: ca)[.posixPermissions] as? Int
            #expect(mode == 0o644)
            let jwt = team.jwt(issuedAt: Int64(Date().timeIntervalSince1970))
            let id = "2B0A6F3C-7C7E-4F73-9B4B-1D2E3F405162"
            let ok = try await Self.curl(pushArguments(ca: ca, jwt: jwt, headers: ["apns-id: \(id)"]) + ["\(url)/3/device/\(Team.token)"])
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect(ok.stdout.hasSuffix("\n2 200\n"), "\(ok.stdout)")
            #expect(ok.stdout.lowercased().contains("apns-id: \(id.lowercased())"))
            #expect(ok.stdout.contains("apns-unique-id: "))

            // The same connection's verdicts: a bad token, then a wrong method on localhost (the SAN).
            let port = url.split(separator: ":").last.map(String.init) ?? ""
            let bad = try await Self.curl(pushArguments(ca: ca, jwt: jwt) + ["\(url)/3/device/nothex"])
            #expect(bad.stdout.contains(#"{"reason":"BadDeviceToken"}"#) && bad.stdout.hasSuffix("\n2 400\n"), "\(bad.stdout)")
            let get = try await Self.curl(["--http2", "--cacert", ca, "-w", "\\n%{http_code}\\n", "https://localhost:\(port)/3/device/\(Team.token)"])
            #expect(get.stdout.contains(#"{"reason":"MethodNotAllowed"}"#) && get.stdout.hasSuffix("\n405\n"), "\(get.stdout) \(get.stderr)")
            let large = try await Self.curl(
                pushArguments(ca: ca, jwt: jwt, payload: #"{"a":""# + String(repeating: "x", count: 5000) + #""}"#)
                    + ["\(url)/3/device/\(Team.token)"])
            #expect(large.stdout.contains(#"{"reason":"PayloadTooLarge"}"#) && large.stdout.hasSuffix("\n2 413\n"), "\(large.stdout)")
            let noAuth = try await Self.curl([
                "--http2", "--cacert", ca, "-X", "POST", "-d", "{}", "-w", "\\n%{http_code}\\n",
                "-H", "apns-topic: \(Team.topic)", "\(url)/3/device/\(Team.token)",
            ])
            #expect(noAuth.stdout.contains(#"{"reason":"MissingProviderToken"}"#) && noAuth.stdout.hasSuffix("\n403\n"), "\(noAuth.stdout)")
            // The HTTP/2 answer is the only one: HTTP/1.1 over TLS gets no ALPN agreement and no answer.
            let http1 = try await Self.curl(["--http1.1", "--cacert", ca, "-w", "%{http_code}", "\(url)/3/device/\(Team.token)"])
            #expect(http1.status != 0 || http1.stdout != "200")

            // The log is written at least every 0.2 s: wait (at most 5 s) for the five requests decided.
            let deadline = ContinuousClock.now + .seconds(5)
            while ((try? logLines(log))?.count ?? 0) < 5, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let lines = try logLines(log)
            let accepted = lines.filter { $0["event"] as? String == "accepted" }
            #expect(accepted.count == 1)
            #expect(accepted.first?["apns_id"] as? String == id && accepted.first?["connection"] as? Int == 1)
            #expect(
                lines.filter { $0["event"] as? String == "refused" }.compactMap { $0["reason"] as? String }.sorted()
                    == ["BadDeviceToken", "MethodNotAllowed", "MissingProviderToken", "PayloadTooLarge"])
        }
    }

    @Test func goAwayAfterNStreamsMovesTheRestToANewConnectionAndEachPushLandsOnce() async throws {
        try await withEndpoint({ $0.goAwayAfter = 2 }) { url, ca, _ in
            let jwt = team.jwt(issuedAt: Int64(Date().timeIntervalSince1970))
            let target = "\(url)/3/device/\(Team.token)"
            let ids = (1...5).map { String(format: "00000000-0000-4000-8000-%012d", $0) }
            var arguments: [String] = []
            for (index, id) in ids.enumerated() {
                if index > 0 { arguments.append("--next") }
                arguments += pushArguments(ca: ca, jwt: jwt, headers: ["apns-id: \(id)"]) + [target]
            }
            // One curl, five requests: it reuses its connection until a GOAWAY, then opens another.
            let result = try await Self.curl(arguments)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.components(separatedBy: "\n2 200\n").count - 1 == 5, "\(result.stdout.debugDescription)")
        } afterStop: { log in  // stopping flushes the log
            let accepted = try logLines(log).filter { $0["event"] as? String == "accepted" }
            #expect(accepted.compactMap { $0["apns_id"] as? String } == (1...5).map { String(format: "00000000-0000-4000-8000-%012d", $0) })
            // Two streams a connection: 1, 1, 2, 2, 3.
            #expect(accepted.compactMap { $0["connection"] as? Int } == [1, 1, 2, 2, 3])
        }
    }

    @Test func streamsSentBeforeTheClientSawTheGoAwayAreRefusedAndTheOnesBelowAnswered() async throws {
        try await withEndpoint({ $0.goAwayAfter = 5 }) { url, _, log in
            let dir = (log as NSString).deletingLastPathComponent
            let payload = dir + "/payload.json"
            try Data(#"{"aps":{"alert":"hi"}}"#.utf8).write(to: URL(fileURLWithPath: payload))
            let jwt = team.jwt(issuedAt: Int64(Date().timeIntervalSince1970))
            // nghttp sends all ten requests' HEADERS, then all their DATA, before it reads anything:
            // streams 6 to 10 reach the endpoint after its GOAWAY, the first five before.
            // (nghttp does not check certificates; curl's tests above do.)
            let result = try await Self.run(
                "/usr/bin/nghttp",
                [
                    "-v", "-n", "--timeout=60", "-m", "10", "-d", payload,
                    "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: \(Team.topic)",
                    "\(url)/3/device/\(Team.token)",
                ])
            let goAway = try #require(result.stdout.components(separatedBy: "recv GOAWAY frame").dropFirst().first)
            let lastStream = try #require(goAway.split(separator: "last_stream_id=").dropFirst().first?.prefix { $0.isNumber })
            let answered = result.stdout.components(separatedBy: ":status: 200").count - 1
            #expect(answered == 5, "\(result.stdout)")
            #expect(!result.stdout.contains(":status: 5") && !result.stdout.contains(":status: 4"))
            // The GOAWAY names the fifth request's stream (nghttp's requests start at 13, after five
            // streams it opens for priorities).
            let streams = result.stdout.split(separator: "\n").filter { $0.contains(":status: 200") }
                .compactMap { $0.split(separator: "stream_id=").dropFirst().first?.prefix { $0.isNumber } }.compactMap { Int($0) }
            #expect(streams.max() == Int(lastStream))
        } afterStop: { log in
            let accepted = try logLines(log).filter { $0["event"] as? String == "accepted" }
            #expect(accepted.count == 5)
        }
    }
}

import Crypto
import Foundation
import RaxxAPNs
import RaxxTestSupport
import Testing

/// `raxx-notify push` against `raxx-sandbox apns` (TLS, HTTP/2) on loopback: what the endpoint
/// logged is the proof — each apns-id accepted exactly once, the provider token's changes.
@Suite(.serialized, .blocking) struct PushEndToEndTests {
    let key = P256.Signing.PrivateKey()
    let keyID = "ABC123DEFG"
    let teamID = "DEF123GHIJ"
    let topic = "app.raxx.ios"

    /// A RAXX_HOME and a 0600 key file in a fresh folder, removed when the test is done with it.
    final class Home: Sendable {
        let home: URL
        let keyFile: String
        init(key: P256.Signing.PrivateKey, keyID: String) throws {
            home = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-push-e2e-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            keyFile = home.appendingPathComponent("AuthKey_\(keyID).p8").path
            FileManager.default.createFile(atPath: keyFile, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        }
        deinit { try? FileManager.default.removeItem(at: home) }
    }

    func home() throws -> Home { try Home(key: key, keyID: keyID) }

    func endpoint(_ arguments: [String] = []) throws -> APNsEndpointProcess {
        try APNsEndpointProcess(keyID: keyID, teamID: teamID, publicKeyPEM: key.publicKey.pemRepresentation, arguments: ["--topic", topic] + arguments)
    }

    func push(_ endpoint: String, ca: String, home: Home, input: String, _ extra: [String] = []) throws -> ToolResult {
        try ToolRunner.run(
            "raxx-notify", arguments(endpoint, ca: ca, keyFile: home.keyFile) + extra,
            environment: ["RAXX_HOME": home.home.path], input: input, timeout: 240)
    }

    func arguments(_ endpoint: String, ca: String, keyFile: String) -> [String] {
        ["push", "--endpoint", endpoint, "--ca-file", ca, "--key-file", keyFile, "--key-id", keyID, "--team-id", teamID, "--topic", topic]
    }

    static func token(_ n: Int) -> String { String(format: "%064x", n) }

    static func lines(_ range: Range<Int>, apnsID: Bool = true) -> String {
        range.map { n in
            let id = apnsID ? #","apns_id":"\#(String(format: "00000000-0000-4000-8000-%012d", n))""# : ""
            return #"{"device_token":"\#(token(n))","payload":{"aps":{"alert":{"title":"Filled","body":"push \#(n)"}}}\#(id)}"#
        }.joined(separator: "\n") + "\n"
    }

    static func results(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// An endpoint whose certificate is not trusted: the first refusal stops the run (exit 69,
    /// naming the certificate problem and --ca-file), every line is listed not_sent, and the
    /// summary says what happened, never "the others were sent".
    @Test func anUntrustedCertificateStopsTheRunAndTheSummaryTellsTheTruth() throws {
        let endpoint = try endpoint()
        let home = try home()
        let count = 2_000
        let args = ["push", "--endpoint", endpoint.url, "--key-file", home.keyFile, "--key-id", keyID, "--team-id", teamID, "--topic", topic]
        let input = #"{"device_token":"nothex"}"# + "\n" + Self.lines(0..<count)
        let result = try ToolRunner.run("raxx-notify", args, environment: ["RAXX_HOME": home.home.path], input: input, timeout: 120)
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("certificate was refused"), "\(result.stderr)")
        #expect(result.stderr.contains("--ca-file"))
        #expect(!result.stderr.contains("the others were sent"))
        #expect(result.stderr.contains("0 delivered"))
        let results = Self.results(result.stdout)
        #expect(results.count == count + 1)
        #expect(results.filter { $0["status"] as? String == "not_sent" }.count == count)
        #expect(endpoint.stop() == 0)
        #expect(endpoint.accepted().isEmpty)
    }

    @Test func throttlingOutagesAndGoAwayAreRetriedAndEveryPushIsDeliveredExactlyOnce() throws {
        let endpoint = try endpoint(["--fail-rate", "0.2", "--seed", "7", "--goaway-after", "60", "--max-concurrent-streams", "8"])
        let home = try home()
        let count = 400
        let result = try push(
            endpoint.url, ca: endpoint.caFile, home: home, input: Self.lines(0..<count, apnsID: false),
            ["--connections", "2", "--max-in-flight", "32", "--retry-for", "120s"])
        #expect(result.status == 0, "\(result.stderr)")
        let results = Self.results(result.stdout)
        #expect(results.count == count)
        #expect(results.allSatisfy { $0["status"] as? String == "delivered" })
        #expect(Set(results.compactMap { $0["line"] as? Int }) == Set(1...count))
        #expect(endpoint.stop() == 0)
        // Exactly once, by apns-id: the ids the results name are the ids the endpoint accepted, once each.
        let accepted = endpoint.accepted().compactMap { $0["apns_id"] as? String }
        #expect(accepted.count == count)
        #expect(Set(accepted) == Set(results.compactMap { $0["apns_id"] as? String }))
        // And the failures did happen (and were answered again, with the same apns-id).
        let refused = endpoint.logLines().filter { $0["event"] as? String == "refused" }
        let reasons = Set(refused.compactMap { $0["reason"] as? String })
        #expect(reasons.isSubset(of: ["TooManyRequests", "InternalServerError", "ServiceUnavailable"]), "\(reasons)")
        #expect(reasons.count == 3)
        #expect(refused.allSatisfy { accepted.contains($0["apns_id"] as? String ?? "") })
        // GOAWAY after 60 streams a connection: more than the two connections allowed at a time were opened, one after another.
        let connections = Set(endpoint.logLines().compactMap { $0["connection"] as? Int })
        #expect(connections.count >= count / 60)
    }

    /// libcurl retires finished streams with an RST_STREAM now and then; a thousand pushes on one
    /// connection keep that connection (a rapid-reset guard counting them once closed it every few
    /// hundred streams, and each closing sent the pushes in flight again after a pause).
    @Test func aThousandPushesOnOneConnectionKeepIt() throws {
        let endpoint = try endpoint()
        let home = try home()
        let count = 1_000
        let result = try push(
            endpoint.url, ca: endpoint.caFile, home: home, input: Self.lines(0..<count),
            ["--connections", "1", "--max-in-flight", "100"])
        #expect(result.status == 0, "\(result.stderr)")
        let results = Self.results(result.stdout)
        #expect(results.count == count && results.allSatisfy { $0["status"] as? String == "delivered" })
        #expect(endpoint.stop() == 0)
        let accepted = endpoint.accepted()
        #expect(accepted.count == count)
        #expect(Set(accepted.compactMap { $0["apns_id"] as? String }).count == count)
        #expect(Set(accepted.compactMap { $0["connection"] as? Int }).count == 1)
        // Each push reached its own device token's path (a handle reused for the next push to the
        // same origin has only its URL's path set).
        let misdirected = accepted.filter { entry in
            let n = (entry["apns_id"] as? String).flatMap { Int($0.suffix(12)) } ?? -1
            return entry["device_token"] as? String != Self.token(n)
        }
        #expect(misdirected.isEmpty, "\(misdirected.prefix(3))")
    }

    /// A proxy in the environment is for the world, not for an endpoint on this machine.
    @Test func aLoopbackEndpointIsReachedDirectlyWhateverTheProxySettings() throws {
        let endpoint = try endpoint()
        let home = try home()
        let proxy = try LoopbackListener(.refuse)
        let result = try ToolRunner.run(
            "raxx-notify", arguments(endpoint.url, ca: endpoint.caFile, keyFile: home.keyFile),
            environment: [
                "RAXX_HOME": home.home.path, "https_proxy": proxy.url, "HTTPS_PROXY": proxy.url,
                "all_proxy": proxy.url, "ALL_PROXY": proxy.url,
            ],
            input: Self.lines(0..<5), timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.results(result.stdout).filter { $0["status"] as? String == "delivered" }.count == 5)
        #expect(endpoint.stop() == 0)
        #expect(endpoint.accepted().count == 5)
    }

    @Test func anExpiredProviderTokenIsReplacedOnce() throws {
        let endpoint = try endpoint(["--expire-provider-tokens-after", "20"])
        let home = try home()
        // A token this key minted 25 minutes ago, as another run left it in the state folder.
        let then = Int64(Date().timeIntervalSince1970) - 25 * 60
        let old = try ProviderToken.sign(keyID: keyID, teamID: teamID, issuedAt: then, key: key)
        let folder = home.home.appendingPathComponent("state/apns", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let tokenFile = folder.appendingPathComponent("\(teamID).\(keyID).token")
        let kept = #"{"after_expiry":false,"key_id":"\#(keyID)","minted_at":\#(then),"team_id":"\#(teamID)","token":"\#(old.compact)"}"#
        FileManager.default.createFile(atPath: tokenFile.path, contents: Data(kept.utf8), attributes: [.posixPermissions: 0o600])

        let result = try push(endpoint.url, ca: endpoint.caFile, home: home, input: Self.lines(0..<35), ["--max-in-flight", "8"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.results(result.stdout).filter { $0["status"] as? String == "delivered" }.count == 35)
        #expect(endpoint.stop() == 0)
        let log = endpoint.logLines()
        // Twenty under the old token, the rest under one new one; no competing mint (TooManyProviderTokenUpdates).
        let iats = log.filter { $0["event"] as? String == "accepted" }.compactMap { $0["iat"] as? Int }
        #expect(iats.filter { $0 == Int(then) }.count == 20)
        #expect(Set(iats).count == 2)
        let refusals = log.filter { $0["event"] as? String == "refused" }.compactMap { $0["reason"] as? String }
        #expect(!refusals.isEmpty && Set(refusals) == ["ExpiredProviderToken"])
        #expect(Set(endpoint.accepted().compactMap { $0["apns_id"] as? String }).count == 35)
        let shared = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: tokenFile)) as? [String: Any])
        #expect(shared["after_expiry"] as? Bool == true && shared["token"] as? String != old.compact)
        let mode = try FileManager.default.attributesOfItem(atPath: tokenFile.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
    }

    @Test func twoConcurrentProcessesShareOneProviderToken() throws {
        let endpoint = try endpoint()
        let home = try home()
        let arguments = arguments(endpoint.url, ca: endpoint.caFile, keyFile: home.keyFile)
        let environment = ["RAXX_HOME": home.home.path]
        let runs = [0..<150, 150..<300].map { range in
            Thread.detachNewThreadResult {
                try ToolRunner.run("raxx-notify", arguments, environment: environment, input: Self.lines(range), timeout: 240)
            }
        }
        for run in runs {
            let result = try run.get()
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(endpoint.stop() == 0)
        let log = endpoint.logLines()
        // A second token for the key within 20 minutes would have been answered TooManyProviderTokenUpdates.
        #expect(log.allSatisfy { $0["event"] as? String == "accepted" }, "\(log.filter { $0["event"] as? String == "refused" }.prefix(3))")
        #expect(Set(endpoint.accepted().compactMap { $0["apns_id"] as? String }).count == 300)
    }

    @Test func malformedAndOversizedLinesAreRefusedAndUnregisteredCarriesItsTimestamp() throws {
        let gone = Self.token(999)
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("unregistered-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: list) }
        try "\(gone) 1700000000123\n".write(to: list, atomically: true, encoding: .utf8)
        let endpoint = try endpoint(["--unregistered", list.path])
        let home = try home()
        let input =
            [
                #"{"device_token":"\#(Self.token(1))","payload":{"aps":{"alert":"one"}}}"#,
                #"{"device_token":"\#(Self.token(2))","payload":{"aps":{"alert":"# + "\"" + String(repeating: "x", count: 5000) + "\"}}}",
                #"{"device_token":"\#(Self.token(3))","payload":"#,
                #"{"device_token":"\#(gone)","payload":{"aps":{"alert":"gone"}}}"#,
                #"""
                {"device_token":"\#(Self.token(5))","event":{"seq":5,"type":"security_alert","created_at":"2026-11-21T10:00:00Z",\#
                "title":"New passkey","body":"A passkey was added."}}
                """#,
            ].joined(separator: "\n") + "\n"
        let result = try push(endpoint.url, ca: endpoint.caFile, home: home, input: input)
        #expect(result.status == 65, "\(result.stderr)")
        let byLine = Dictionary(uniqueKeysWithValues: Self.results(result.stdout).map { ($0["line"] as? Int ?? 0, $0) })
        #expect(byLine[1]?["status"] as? String == "delivered" && byLine[5]?["status"] as? String == "delivered")
        #expect(byLine[2]?["status"] as? String == "malformed" && byLine[2]?["field"] as? String == "payload")
        #expect(byLine[3]?["status"] as? String == "malformed")
        #expect(byLine[4]?["status"] as? String == "unregistered" && byLine[4]?["reason"] as? String == "Unregistered")
        #expect(byLine[4]?["timestamp"] as? String == "2023-11-14T22:13:20.123Z" && byLine[4]?["token"] as? String == String(gone.suffix(8)))
        #expect(endpoint.stop() == 0)
        let accepted = endpoint.accepted()
        #expect(accepted.count == 2)
        let rendered = try #require(accepted.first { $0["device_token"] as? String == Self.token(5) }?["payload"] as? [String: Any])
        #expect((rendered["aps"] as? [String: Any])?["thread-id"] as? String == "raxx.security_alert" && rendered["seq"] as? Int == 5)
    }

    @Test func anUnreachableEndpointExits69WithEveryLineNotSent() throws {
        let endpoint = try endpoint()
        let url = endpoint.url, ca = endpoint.caFile
        endpoint.stop()  // nothing listens there any more
        let home = try home()
        let result = try push(url, ca: ca, home: home, input: Self.lines(0..<50), ["--retry-for", "2s", "--max-in-flight", "4"])
        #expect(result.status == 69, "\(result.stderr)")
        let results = Self.results(result.stdout)
        #expect(results.count == 50 && results.allSatisfy { $0["status"] as? String == "not_sent" })
        #expect(result.stderr.contains("could not be reached"))
    }

    /// A provider token APNs refuses (the wrong team): the run stops at the first refusal with
    /// exit 77 and what to check, and the rest is listed not_sent, not thousands of failures.
    @Test func aRefusedProviderTokenStopsTheRunWith77() throws {
        let endpoint = try endpoint()
        let home = try home()
        let args = [
            "push", "--endpoint", endpoint.url, "--ca-file", endpoint.caFile, "--key-file", home.keyFile, "--key-id", keyID,
            "--team-id", "WRONG12345", "--topic", topic, "--max-in-flight", "1",
        ]
        let result = try ToolRunner.run("raxx-notify", args, environment: ["RAXX_HOME": home.home.path], input: Self.lines(0..<200), timeout: 120)
        #expect(result.status == 77, "\(result.stderr)")
        let results = Self.results(result.stdout)
        #expect(results.count == 200)
        #expect(results.filter { $0["status"] as? String == "failed" }.count == 1)
        #expect(results.filter { $0["status"] as? String == "not_sent" }.count == 199)
        #expect(result.stderr.contains("APNs refused the provider token (InvalidProviderToken)") && result.stderr.contains("--team-id"))
        #expect(endpoint.stop() == 0)
    }

    /// SIGINT while the input is still open: no more is read, every line read is reported, the
    /// summary is printed, exit 130.
    @Test func anInterruptedRunReportsWhatItReadAndExits130() async throws {
        let endpoint = try endpoint()
        let home = try home()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltTools.path("raxx-notify"))
        process.arguments = arguments(endpoint.url, ca: endpoint.caFile, keyFile: home.keyFile)
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "RAXX_HOME": home.home.path]
        let out = Pipe(), err = Pipe(), input = Pipe()
        (process.standardOutput, process.standardError, process.standardInput) = (out, err, input)
        let stdout = Collected(out.fileHandleForReading), stderr = Collected(err.fileHandleForReading)
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // Three lines, and the pipe stays open: the tool waits for more.
        try input.fileHandleForWriting.write(contentsOf: Data(Self.lines(0..<3).utf8))
        #expect(stdout.wait(timeout: 60) { Self.results($0).count >= 3 }, "\(stderr.text)")
        #expect(Self.results(stdout.text).count == 3, "\(stderr.text)")
        kill(process.processIdentifier, SIGINT)
        // The tool ends by itself: its stdout closes within the bound.
        #expect(stdout.waitForEnd(timeout: 30))
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        #expect(stderr.finish().contains("Stopped by SIGINT: 3 delivered, 0 unregistered, 0 failed, 0 not sent, 0 malformed, of 3."))
        #expect(Self.results(stdout.finish()).allSatisfy { $0["status"] as? String == "delivered" })
        try? input.fileHandleForWriting.close()
        #expect(endpoint.stop() == 0)
    }

    @Test func aKeyFileOthersCanReadIsRefusedWith77() throws {
        let home = try home()
        chmod(home.keyFile, 0o640)
        let result = try push("https://127.0.0.1:9", ca: "/dev/null", home: home, input: Self.lines(0..<1))
        #expect(result.status == 77)
        #expect(result.stderr.contains("chmod 600") && result.stdout.isEmpty)
    }
}

extension Thread {
    /// Runs `body` on a new thread; `get()` waits for its result.
    static func detachNewThreadResult<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> ThreadResult<T> {
        let result = ThreadResult<T>()
        Thread.detachNewThread { result.set(Result { try body() }) }
        return result
    }
}

final class ThreadResult<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var value: Result<T, any Error>?
    func set(_ value: Result<T, any Error>) { self.value = value; done.signal() }
    func get() throws -> T { done.wait(); return try value!.get() }
}

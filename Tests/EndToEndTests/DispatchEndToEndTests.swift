import Crypto
import Foundation
import RaxxTestSupport
import Testing

/// The sandbox as Raptor dispatches: `raxx-sandbox serve --apns-url …` pushes each new alert to
/// the account's opted-in devices at a local APNs endpoint (TLS, HTTP/2); the endpoint's log is
/// the proof of what arrived.
@Suite(.serialized, .blocking) struct DispatchEndToEndTests {
    let key = P256.Signing.PrivateKey()
    let keyID = "DISPATCH01"
    let teamID = "TEAM000001"
    let topic = "app.raxx.ios"
    static let optedIn = String(repeating: "ab", count: 28) + "f111f111"
    static let elsewhere = String(repeating: "cd", count: 28) + "5ec05ec0"

    /// A sandbox pushing to `endpoint`, with the provider key in a 0600 file of its own folder.
    func home(_ endpoint: APNsEndpointProcess) throws -> OrderHome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-dispatch-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keyFile = folder.appendingPathComponent("AuthKey_\(keyID).p8").path
        FileManager.default.createFile(atPath: keyFile, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        let home = try OrderHome(sandboxArguments: [
            "--apns-url", endpoint.url, "--apns-key-file", keyFile, "--apns-key-id", keyID,
            "--apns-team-id", teamID, "--apns-topic", topic, "--apns-ca-file", endpoint.caFile,
        ])
        home.alsoRemove.append(folder)
        return home
    }

    func endpoint(_ arguments: [String] = []) throws -> APNsEndpointProcess {
        try APNsEndpointProcess(keyID: keyID, teamID: teamID, publicKeyPEM: key.publicKey.pemRepresentation, arguments: ["--topic", topic] + arguments)
    }

    func notify(_ home: OrderHome, _ arguments: [String]) throws -> ToolResult {
        try ToolRunner.run("raxx-notify", arguments, environment: home.environment, timeout: 60)
    }

    /// Waits (up to 40 s, the machine may be loaded) until `done` holds of the endpoint's log.
    func waitFor(_ endpoint: APNsEndpointProcess, _ done: ([[String: Any]]) -> Bool) -> [[String: Any]] {
        for _ in 0..<400 {
            let lines = endpoint.logLines()
            if done(lines) { return lines }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return endpoint.logLines()
    }

    @Test func aPaperFillReachesTheOptedInDeviceOnceAndNoOtherDevice() throws {
        let apns = try endpoint()
        defer { _ = apns.stop() }
        let home = try home(apns)
        #expect(try notify(home, ["devices", "add", "--token", Self.optedIn, "--environment", "sandbox", "--alerts", "fill_confirmed"]).status == 0)
        #expect(try notify(home, ["devices", "add", "--token", Self.elsewhere, "--environment", "sandbox", "--alerts", "security_alert"]).status == 0)
        let placed = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "2", "--client-order-id", "d-1"])
        #expect(placed.status == 0, "\(placed.stderr)")

        _ = waitFor(apns) { lines in lines.contains { $0["event"] as? String == "accepted" } }
        // A second fill, the marker: the dispatcher hands alerts over in order, so anything more of
        // the first (a repeat, another device) reaches the endpoint before the second's push.
        let marker = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "1", "--client-order-id", "d-2"])
        #expect(marker.status == 0, "\(marker.stderr)")
        _ = waitFor(apns) { lines in lines.filter { $0["event"] as? String == "accepted" }.count >= 2 }
        let accepted = apns.accepted()
        #expect(accepted.count == 2, "\(apns.logLines())")
        #expect(accepted.allSatisfy { $0["device_token"] as? String == Self.optedIn })
        #expect(Set(accepted.compactMap { ($0["payload"] as? [String: Any])?["seq"] as? Int }).count == 2, "one push per fill, each once")
        let push = try #require(accepted.first)
        #expect(push["device_token"] as? String == Self.optedIn)
        #expect(push["topic"] as? String == topic && push["push_type"] as? String == "alert" && push["priority"] as? Int == 10)
        let payload = try #require(push["payload"] as? [String: Any])
        let aps = try #require(payload["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Order filled")
        #expect((alert["body"] as? String)?.contains("Bought 2 AAPL") == true, "\(alert)")
        #expect(aps["thread-id"] as? String == "raxx.fill_confirmed")
        #expect(payload["type"] as? String == "fill_confirmed" && payload["seq"] as? Int != nil)
        // Never the email or the account: the payload is the alert, nothing of who.
        let text = String(decoding: try JSONSerialization.data(withJSONObject: payload), as: UTF8.self)
        #expect(!text.contains("@") && !text.contains("acct_") && !text.contains("usr_"), "\(text)")
        #expect(apns.logLines().allSatisfy { $0["device_token"] as? String != Self.elsewhere })
    }

    @Test func anUnregisteredTokenRevokesItsDevice() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-dispatch-410-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let unregistered = folder.appendingPathComponent("unregistered.txt")
        // APNs learnt the token was gone a minute from now: after the device was registered.
        let at = Int64((Date().timeIntervalSince1970 + 60) * 1000)
        try "\(Self.optedIn) \(at)\n".write(to: unregistered, atomically: true, encoding: .utf8)
        let apns = try endpoint(["--unregistered", unregistered.path])
        defer { _ = apns.stop() }
        let home = try home(apns)
        #expect(try notify(home, ["devices", "add", "--token", Self.optedIn, "--environment", "sandbox"]).status == 0)
        #expect(try home.order(["place", "--symbol", "MSFT", "--side", "buy", "--qty", "1", "--client-order-id", "d-2"]).status == 0)
        _ = waitFor(apns) { lines in lines.contains { $0["status"] as? Int == 410 } }
        // The sandbox revokes the device once the answer is in.
        var devices = ""
        for _ in 0..<400 {
            devices = try notify(home, ["devices", "list", "--json"]).stdout
            if devices.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(devices.isEmpty, "\(devices)")
        #expect(apns.accepted().isEmpty)
    }
}

import Crypto
import Foundation
import RaxxAPNs
import RaxxTestSupport
import Testing

/// `raxx-sandbox apns` as tests and benchmarks start it, with curl (HTTP/2, nghttp2) as the client.
@Suite(.serialized, .blocking) struct APNsEndpointEndToEndTests {
    let key = P256.Signing.PrivateKey()
    let keyID = "ABC123DEFG"
    let teamID = "DEF123GHIJ"
    let topic = "app.raxx.ios"
    let device = String(repeating: "1f", count: 32)
    let gone = String(repeating: "2e", count: 32)

    func curl(_ endpoint: APNsEndpointProcess, token: String, jwt: String, id: String) throws -> String {
        try ToolRunner.system(
            "/usr/bin/curl",
            [
                "--silent", "--show-error", "--max-time", "60", "--http2", "--cacert", endpoint.caFile,
                "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: \(topic)", "-H", "apns-push-type: alert",
                "-H", "apns-id: \(id)", "--data-binary", #"{"aps":{"alert":{"title":"Filled","body":"AAPL"}}}"#,
                "-w", "\n%{http_version} %{http_code}", "\(endpoint.url)/3/device/\(token)",
            ]
        ).stdout
    }

    @Test func pushesAreCheckedAnsweredAndLoggedAndStopFlushesTheLog() throws {
        let tokens = FileManager.default.temporaryDirectory.appendingPathComponent("unregistered-\(UUID().uuidString).txt")
        try "\(gone) 1700000000000\n".write(to: tokens, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: tokens) }
        let endpoint = try APNsEndpointProcess(
            keyID: keyID, teamID: teamID, publicKeyPEM: key.publicKey.pemRepresentation,
            arguments: ["--topic", topic, "--unregistered", tokens.path])
        #expect(endpoint.url.hasPrefix("https://127.0.0.1:") && endpoint.port > 0)
        let ca = try String(contentsOfFile: endpoint.caFile, encoding: .utf8)
        #expect(ca.hasPrefix("-----BEGIN CERTIFICATE-----"))

        let jwt = try ProviderToken.sign(keyID: keyID, teamID: teamID, issuedAt: Int64(Date().timeIntervalSince1970), key: key).compact
        let delivered = try curl(endpoint, token: device, jwt: jwt, id: "6C5E3B1A-0000-4000-8000-000000000001")
        #expect(delivered == "\n2 200", "\(delivered)")
        let unregistered = try curl(endpoint, token: gone, jwt: jwt, id: "6C5E3B1A-0000-4000-8000-000000000002")
        #expect(unregistered == #"{"reason":"Unregistered","timestamp":1700000000000}"# + "\n2 410", "\(unregistered)")
        let other = try ProviderToken.sign(
            keyID: keyID, teamID: teamID, issuedAt: Int64(Date().timeIntervalSince1970),
            key: P256.Signing.PrivateKey()
        ).compact
        let forged = try curl(endpoint, token: device, jwt: other, id: "6C5E3B1A-0000-4000-8000-000000000003")
        #expect(forged == #"{"reason":"InvalidProviderToken"}"# + "\n2 403", "\(forged)")

        #expect(endpoint.stop() == 0)
        let accepted = endpoint.accepted()
        #expect(accepted.count == 1)
        #expect(accepted.first?["apns_id"] as? String == "6C5E3B1A-0000-4000-8000-000000000001")
        #expect(accepted.first?["device_token"] as? String == device && accepted.first?["kid"] as? String == keyID)
        let refused = endpoint.logLines().filter { $0["event"] as? String == "refused" }
        #expect(refused.compactMap { $0["reason"] as? String } == ["Unregistered", "InvalidProviderToken"])
        #expect(refused.first?["timestamp"] as? Int == 1_700_000_000_000)
    }

    /// `--make-key DIR` makes the provider key a local setup needs, as Apple's account gives one:
    /// the .p8 the owner's alone, its public key for the endpoint, the key ID on stdout; a token
    /// signed with it is accepted, and a second key never overwrites the first.
    @Test func makeKeyMakesAProviderKeyTheEndpointAccepts() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("apns-keys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try ToolRunner.run("raxx-sandbox", ["apns", "--make-key", dir.path])
        #expect(made.status == 0, "\(made.stderr)")
        let keyID = made.stdout.trimmingCharacters(in: .newlines)
        #expect(keyID.count == 10 && keyID.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }, "\(keyID)")
        let p8 = dir.appendingPathComponent("AuthKey_\(keyID).p8").path, pub = dir.appendingPathComponent("AuthKey_\(keyID).pub.pem").path
        #expect(try FileManager.default.attributesOfItem(atPath: p8)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: dir.path)[.posixPermissions] as? Int == 0o700)
        let key = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: p8, encoding: .utf8))
        let endpoint = try APNsEndpointProcess(
            keyID: keyID, teamID: teamID, publicKeyPEM: try String(contentsOfFile: pub, encoding: .utf8),
            arguments: ["--topic", topic])
        let jwt = try ProviderToken.sign(keyID: keyID, teamID: teamID, issuedAt: Int64(Date().timeIntervalSince1970), key: key).compact
        #expect(try curl(endpoint, token: device, jwt: jwt, id: "6C5E3B1A-0000-4000-8000-000000000009") == "\n2 200")
        #expect(endpoint.stop() == 0)
        let again = try ToolRunner.run("raxx-sandbox", ["apns", "--make-key", dir.path])
        #expect(again.status == 0 && again.stdout != made.stdout)
        #expect(try String(contentsOfFile: p8, encoding: .utf8).contains("BEGIN PRIVATE KEY"))
        let mixed = try ToolRunner.run("raxx-sandbox", ["apns", "--make-key", dir.path, "--team-id", teamID])
        #expect(mixed.status == 64 && mixed.stderr.contains("--make-key makes a key and exits"))
    }

    @Test func badKeyAndTokensFilesAreRefusedNamingTheFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("apns-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let notAKey = dir.appendingPathComponent("key.pem")
        try "hello\n".write(to: notAKey, atomically: true, encoding: .utf8)
        let common = ["apns", "--port", "0", "--tls-dir", dir.appendingPathComponent("tls").path, "--team-id", teamID, "--key-id", keyID]
        let badKey = try ToolRunner.run("raxx-sandbox", common + ["--public-key", notAKey.path])
        #expect(badKey.status == 65)
        #expect(badKey.stderr.contains(notAKey.path) && badKey.stdout.isEmpty)

        let goodKey = dir.appendingPathComponent("good.pem")
        try key.publicKey.pemRepresentation.write(to: goodKey, atomically: true, encoding: .utf8)
        let tokens = dir.appendingPathComponent("tokens.txt")
        try "\(gone)\nnot-hex\n".write(to: tokens, atomically: true, encoding: .utf8)
        let badTokens = try ToolRunner.run("raxx-sandbox", common + ["--public-key", goodKey.path, "--unregistered", tokens.path])
        #expect(badTokens.status == 65)
        #expect(badTokens.stderr.contains(tokens.path) && badTokens.stderr.contains("line 2"))

        let unpaired = try ToolRunner.run("raxx-sandbox", common + ["--key-id", "SECONDKEY1", "--public-key", goodKey.path])
        #expect(unpaired.status == 64)
    }
}

import Foundation
import RaxxCore
import RaxxVault
import Testing

/// A folder of its own for each test, with a machine identity file the test controls.
final class VaultFolder {
    let root: URL
    let machineID: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-vault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        machineID = root.appendingPathComponent("machine-id")
        try "0123456789abcdef0123456789abcdef\n".write(to: machineID, atomically: true, encoding: .utf8)
    }

    var state: URL { root.appendingPathComponent("state") }
    var keystore: Keystore { Keystore(directory: state, machineIDPath: machineID.path) }

    deinit { try? FileManager.default.removeItem(at: root) }
}

let sampleSession = StoredSession(
    email: "t@example.com", accountID: "acc_1", accessToken: "access-secret",
    accessExpiresAt: Date(timeIntervalSince1970: 1_800_000_000), renewalToken: "renewal-secret",
    sessionExpiresAt: Date(timeIntervalSince1970: 1_800_003_600), signedInAt: Date(timeIntervalSince1970: 1_799_999_000))

let origin = "https://api.raxx.app"

func code(_ body: () throws -> Void) -> String? {
    do { try body(); return nil } catch let e as RaxxError { return e.code } catch { return "\(error)" }
}

@Suite struct KeystoreTests {
    @Test func roundTripsSealedWithPrivateModes() throws {
        let folder = try VaultFolder()
        let keystore = folder.keystore
        #expect(try keystore.load() == KeystoreContents())
        try keystore.save(KeystoreContents(servers: [origin: ServerCredentials(session: sampleSession)]))
        #expect(try keystore.load()[origin].session == sampleSession)
        let attributes = try FileManager.default.attributesOfItem(atPath: keystore.url.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((try FileManager.default.attributesOfItem(atPath: folder.state.path)[.posixPermissions] as? Int) == 0o700)
        // Sealed: no token in the clear, and no temporary file left behind.
        let raw = try Data(contentsOf: keystore.url)
        #expect(raw.range(of: Data("access-secret".utf8)) == nil)
        #expect(raw.range(of: Data("t@example.com".utf8)) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.state.path).sorted() == ["device.secret", "keystore"])
    }

    @Test func aFlippedByteIsDamageAndTheFileIsLeftAlone() throws {
        let folder = try VaultFolder()
        try folder.keystore.save(KeystoreContents(servers: [origin: ServerCredentials(session: sampleSession)]))
        var bytes = try Data(contentsOf: folder.keystore.url)
        for index in [0, 10, 30, bytes.count / 2, bytes.count - 1] {
            var damaged = bytes
            damaged[index] ^= 0x01
            try damaged.write(to: folder.keystore.url)
            #expect(code { _ = try folder.keystore.load() } == "keystore_damaged", "byte \(index)")
            #expect(try Data(contentsOf: folder.keystore.url) == damaged)
        }
        bytes.removeLast(40)
        try bytes.write(to: folder.keystore.url)
        #expect(code { _ = try folder.keystore.load() } == "keystore_damaged")
    }

    @Test func anotherMachineCannotOpenIt() throws {
        let folder = try VaultFolder()
        try folder.keystore.save(KeystoreContents(servers: [origin: ServerCredentials(session: sampleSession)]))
        let other = folder.root.appendingPathComponent("other-machine-id")
        try "fedcba9876543210fedcba9876543210".write(to: other, atomically: true, encoding: .utf8)
        let elsewhere = Keystore(directory: folder.state, machineIDPath: other.path)
        do {
            _ = try elsewhere.load()
            Issue.record("opened on another machine")
        } catch {
            #expect(error.code == "keystore_other_machine")
            #expect(error.status == .failure)
            #expect(error.message.contains("another machine"))
        }
    }

    @Test func withoutTheDeviceSecretItDoesNotOpen() throws {
        let folder = try VaultFolder()
        try folder.keystore.save(KeystoreContents(servers: [origin: ServerCredentials(session: sampleSession)]))
        try FileManager.default.removeItem(at: folder.state.appendingPathComponent("device.secret"))
        #expect(code { _ = try folder.keystore.load() } == "device_secret_missing")
    }

    @Test func refusesPermissiveModesAndSaysHowToFixThem() throws {
        let folder = try VaultFolder()
        try folder.keystore.save(KeystoreContents(servers: [origin: ServerCredentials(session: sampleSession)]))
        chmod(folder.keystore.url.path, 0o644)
        do {
            _ = try folder.keystore.load()
            Issue.record("opened a world-readable keystore")
        } catch {
            #expect(error.code == "keystore_permissions")
            #expect(error.hint == "Fix it with: chmod 600 \(folder.keystore.url.path)")
        }
        chmod(folder.keystore.url.path, 0o600)
        chmod(folder.state.path, 0o755)
        #expect(code { _ = try folder.keystore.load() } == "keystore_permissions")
        chmod(folder.state.path, 0o700)
        #expect(try folder.keystore.load()[origin].session == sampleSession)
    }

    @Test func destroyRemovesOnlyTheKeystore() throws {
        let folder = try VaultFolder()
        try folder.keystore.save(KeystoreContents(servers: [origin: ServerCredentials(session: sampleSession)]))
        try folder.keystore.destroy()
        #expect(!folder.keystore.exists)
        #expect(try folder.keystore.load() == KeystoreContents())
    }
}

@Suite struct PINTests {
    func pipe(_ text: String) throws -> Int32 {
        var fds: [Int32] = [0, 0]
        #expect(Glibc.pipe(&fds) == 0)
        _ = text.withCString { write(fds[1], $0, strlen($0)) }
        close(fds[1])
        return fds[0]
    }

    @Test func readsOneLineFromAFileDescriptor() throws {
        let fd = try pipe("246810\nnext line\n")
        defer { close(fd) }
        let pin = try PIN.read(from: .fileDescriptor(fd))
        #expect(pin.withUnsafeBytes { Array($0) } == Array("246810".utf8))
    }

    @Test func acceptsCRLFAndEndOfFile() throws {
        let a = try pipe("1234\r\n"), b = try pipe("5678")
        defer { close(a); close(b) }
        #expect(try PIN.read(from: .fileDescriptor(a)).withUnsafeBytes { Array($0) } == Array("1234".utf8))
        #expect(try PIN.read(from: .fileDescriptor(b)).withUnsafeBytes { Array($0) } == Array("5678".utf8))
    }

    /// A new passkey's PIN (asked with confirm) is held to one rule, said one way, whether it is
    /// 3 characters or 5 (it was "4 to 64" for one and "at least 6" for the other).
    @Test(arguments: ["123\n", "12345\n"])
    func aNewPINTooShortGetsTheNewPINRule(text: String) throws {
        let fd = try pipe(text)
        defer { close(fd) }
        var message: String?
        do { _ = try PIN.read(from: .fileDescriptor(fd), confirm: true) } catch { message = error.message }
        #expect(message == "A new passkey's PIN has 6 to 64 characters.")
    }

    @Test(arguments: ["", "\n", "123\n", String(repeating: "9", count: 65) + "\n"])
    func refusesBadPINs(text: String) throws {
        let fd = try pipe(text)
        defer { close(fd) }
        #expect(code { _ = try PIN.read(from: .fileDescriptor(fd)) } == "bad_input")
    }

    @Test func aClosedDescriptorIsAUsageError() {
        #expect(code { _ = try PIN.read(from: .fileDescriptor(987)) } == "usage")
    }
}

@Suite struct KeystoreVersionTests {
    @Test func aVersion1KeystoreKeepsItsPasskeyUnboundAndDropsItsSession() throws {
        // Version 1 held one passkey and one session, with no record of the server they came from.
        let credential =
            #"""
            {"credentialID":"Y3JlZA","rpID":"raxx.app","userHandle":"dQ","email":"t@example.com","publicKey":"cA","sealedPrivateKey":"cw",\#
            "pinSalt":"cw","pinOpsLimit":2,"pinMemLimit":67108864,"signCount":3,"failedPINAttempts":0,"createdAt":1795000000}
            """#
        let session =
            #"""
            {"email":"t@example.com","accountID":"acc_1","accessToken":"a","accessExpiresAt":1800000000,"renewalToken":"r","sessionExpiresAt":1800003600,\#
            "signedInAt":1799999000}
            """#
        let v1 = #"{"version":1,"credential":\#(credential),"session":\#(session)}"#
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let contents = try decoder.decode(KeystoreContents.self, from: Data(v1.utf8))
        #expect(contents.servers.isEmpty)  // no token is sent anywhere: nothing says which server issued it
        #expect(contents.unboundCredential?.rpID == "raxx.app")
        #expect(contents.unboundCredential?.signCount == 3)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let again = try decoder.decode(KeystoreContents.self, from: try encoder.encode(contents))
        #expect(again == contents)
    }

    /// Decoding reads the keys encoding writes, every field of every type: set and, where it may
    /// be, left out.
    @Test func everyFieldEncodedIsDecodedBack() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let credential = try decoder.decode(
            StoredCredential.self,
            from: Data(
                #"""
                {"credentialID":"Y3JlZA","rpID":"raxx.app","userHandle":"dQ","email":"t@example.com","publicKey":"cA","sealedPrivateKey":"cw",
                 "pinSalt":"c2FsdA","pinOpsLimit":2,"pinMemLimit":67108864,"signCount":7,"failedPINAttempts":1,"createdAt":1795000000}
                """#.utf8))
        #expect(credential.signCount == 7 && credential.failedPINAttempts == 1 && credential.pinSalt == "c2FsdA")
        var issued = sampleSession
        issued.accessIssuedAt = Date(timeIntervalSince1970: 1_799_999_500)
        let contents = KeystoreContents(
            servers: [
                origin: ServerCredentials(credential: credential, session: issued),
                "http://127.0.0.1:8080": ServerCredentials(session: sampleSession),
                "http://127.0.0.1:9090": ServerCredentials(credential: credential),
            ],
            unboundCredential: credential)
        let data = try encoder.encode(contents)
        #expect(try decoder.decode(KeystoreContents.self, from: data) == contents)
        // A missing required field is an error, not a default.
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var servers = try #require(object["servers"] as? [String: Any])
        var entry = try #require(servers[origin] as? [String: Any])
        var session = try #require(entry["session"] as? [String: Any])
        session.removeValue(forKey: "renewalToken")
        entry["session"] = session
        servers[origin] = entry
        object["servers"] = servers
        #expect(throws: DecodingError.self) { try decoder.decode(KeystoreContents.self, from: try JSONSerialization.data(withJSONObject: object)) }
    }

    @Test func coreDumpsAndInspectionAreOff() {
        Hardening.disableCoreDumps()
        #expect(!Hardening.isDumpable)
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
        #expect(limit.rlim_cur == 0 && limit.rlim_max == 0)
    }
}

import CSodium
import Foundation
import RaxxCore

#if canImport(Glibc)
import Glibc
#endif

/// What the keystore holds: this device's passkey (its private key sealed again under the PIN) and
/// the current session's tokens.
public struct KeystoreContents: Codable, Sendable, Equatable {
    public var version = 1
    public var credential: StoredCredential?
    public var session: StoredSession?

    public init(credential: StoredCredential? = nil, session: StoredSession? = nil) {
        self.credential = credential
        self.session = session
    }
}

/// A passkey of the software authenticator.
public struct StoredCredential: Codable, Sendable, Equatable {
    public var credentialID: String       // base64url
    public var rpID: String
    public var userHandle: String         // base64url
    public var email: String
    public var publicKey: String          // base64url, X9.63 uncompressed P-256 point
    public var sealedPrivateKey: String   // base64url: nonce ‖ XChaCha20-Poly1305(private key) under the PIN key
    public var pinSalt: String            // base64url
    public var pinOpsLimit: UInt64
    public var pinMemLimit: UInt64
    public var signCount: UInt32
    public var failedPINAttempts: Int
    public var createdAt: Date
}

/// The session's tokens. Never printed, logged, cached or passed on argv or in the environment.
public struct StoredSession: Codable, Sendable, Equatable {
    public var email: String
    public var accountID: String
    public var accessToken: String
    public var accessExpiresAt: Date
    public var renewalToken: String
    public var sessionExpiresAt: Date
    public var signedInAt: Date

    public init(email: String, accountID: String, accessToken: String, accessExpiresAt: Date,
                renewalToken: String, sessionExpiresAt: Date, signedInAt: Date) {
        self.email = email
        self.accountID = accountID
        self.accessToken = accessToken
        self.accessExpiresAt = accessExpiresAt
        self.renewalToken = renewalToken
        self.sessionExpiresAt = sessionExpiresAt
        self.signedInAt = signedInAt
    }
}

/// One file, sealed with XChaCha20-Poly1305 under the device key.
///
/// Layout: magic (8) ‖ key fingerprint (16) ‖ nonce (24) ‖ ciphertext+tag ‖ BLAKE2b checksum (32).
/// The checksum tells a damaged file; the fingerprint tells a file sealed on another machine.
public struct Keystore: KeystoreAccess {
    public let url: URL
    public let deviceKey: DeviceKey

    static let magic: [UInt8] = Array("RAXXKS".utf8) + [0, 1]

    public init(directory: URL, machineIDPath: String? = nil) {
        self.url = directory.appendingPathComponent("keystore")
        self.deviceKey = DeviceKey(secretURL: directory.appendingPathComponent("device.secret"), machineIDPath: machineIDPath)
    }

    public var exists: Bool { FileManager.default.fileExists(atPath: url.path) }

    public var location: String { url.path }

    /// How long a second process waits for the keystore's lock.
    public static let lockWait = RaxxDuration.seconds(10)

    /// The contents, or empty contents when there is no keystore yet.
    public func load() throws(RaxxError) -> KeystoreContents {
        guard exists else { return KeystoreContents() }
        Hardening.disableCoreDumps()
        try SecureFile.checkPrivate(url.deletingLastPathComponent(), isDirectory: true)
        try SecureFile.checkPrivate(url)
        let file = try SecureFile.read(url)
        let bytes = file.withUnsafeBytes { Array($0) }
        let headerCount = Self.magic.count + 16 + 24
        let tagCount = 16, sumCount = 32
        guard bytes.count >= headerCount + tagCount + sumCount else { throw damaged }
        let body = Array(bytes[..<(bytes.count - sumCount)])
        guard Self.checksum(body) == Array(bytes[(bytes.count - sumCount)...]) else { throw damaged }
        guard Array(body[..<Self.magic.count]) == Self.magic else { throw damaged }
        let fingerprint = Array(body[Self.magic.count..<(Self.magic.count + 16)])
        let nonce = Array(body[(Self.magic.count + 16)..<headerCount])
        let ciphertext = Array(body[headerCount...])
        let key = try deviceKey.keystoreKey(create: false)
        defer { key.wipe() }
        guard DeviceKey.fingerprint(of: key) == fingerprint else {
            throw RaxxError.failure(code: "keystore_other_machine",
                                    "The keystore at \(url.path) was sealed on another machine and cannot be opened here.",
                                    hint: "Keystores never move between machines: run raxx-auth logout --forget-device, then raxx-auth register on this one.")
        }
        let ad = Array(body[..<(Self.magic.count + 16)])
        let plain = SecretBytes(count: ciphertext.count - tagCount)
        var plainCount: UInt64 = 0
        let opened = plain.withUnsafeMutableBytes { p in
            key.withUnsafeBytes { k in
                crypto_aead_xchacha20poly1305_ietf_decrypt(
                    p.baseAddress!.assumingMemoryBound(to: UInt8.self), &plainCount, nil,
                    ciphertext, UInt64(ciphertext.count), ad, UInt64(ad.count), nonce,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard opened == 0 else { throw damaged }
        defer { plain.wipe() }
        do {
            return try plain.withUnsafeBytes { try Self.decoder.decode(KeystoreContents.self, from: Data($0)) }
        } catch {
            throw damaged
        }
    }

    /// Seals and writes `contents` atomically (creating the device secret on first use).
    public func save(_ contents: KeystoreContents) throws(RaxxError) {
        Hardening.disableCoreDumps()
        try SecureFile.ensureDirectory(url.deletingLastPathComponent())
        let key = try deviceKey.keystoreKey(create: true)
        defer { key.wipe() }
        var json: Data
        do { json = try Self.encoder.encode(contents) } catch {
            throw RaxxError.failure(code: "internal", "Could not encode the keystore: \(error)")
        }
        defer { json.withUnsafeMutableBytes { if let b = $0.baseAddress { sodium_memzero(b, $0.count) } } }
        var nonce = [UInt8](repeating: 0, count: 24)
        randombytes_buf(&nonce, 24)
        let ad = Self.magic + DeviceKey.fingerprint(of: key)
        var ciphertext = [UInt8](repeating: 0, count: json.count + 16)
        var cipherCount: UInt64 = 0
        json.withUnsafeBytes { m in
            key.withUnsafeBytes { k in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    &ciphertext, &cipherCount, m.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                    ad, UInt64(ad.count), nil, nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        let body = ad + nonce + ciphertext
        try SecureFile.writeAtomically(SecretBytes(copying: body + Self.checksum(body)), to: url)
    }

    /// Removes the keystore file (the device secret stays, for the next one).
    public func destroy() throws(RaxxError) {
        guard exists else { return }
        guard unlink(url.path) == 0 else {
            throw RaxxError.failure(code: "keystore_unwritable", "Could not remove \(url.path): \(String(cString: strerror(errno))).")
        }
    }

    /// Runs `body` holding the keystore's lock (`keystore.lock` beside it), waiting up to
    /// `lockWait` for another process to finish.
    public func withLock<T>(_ body: () async throws -> T) async throws -> T {
        try SecureFile.ensureDirectory(url.deletingLastPathComponent())
        let lock = try await FileLock.acquire(
            path: url.deletingLastPathComponent().appendingPathComponent("keystore.lock").path, wait: Self.lockWait,
            busy: RaxxError(code: "keystore_busy", message: "Another raxx process is updating the keystore.", status: .temporary))
        defer { lock.release() }
        return try await body()
    }

    private var damaged: RaxxError {
        RaxxError.failure(code: "keystore_damaged", "The keystore at \(url.path) is damaged and cannot be opened.",
                          hint: "It was left as it is. Move it aside and sign in again: raxx-auth register or raxx-auth login.")
    }

    static func checksum(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        crypto_generichash(&out, 32, bytes, UInt64(bytes.count), nil, 0)
        return out
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .secondsSince1970
        e.outputFormatting = .sortedKeys
        return e
    }()

    static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .secondsSince1970
        return d
    }()
}

/// Process-level protections while secrets are in memory.
public enum Hardening {
    /// No core dumps: a crash must not write keys or tokens to disk.
    public static func disableCoreDumps() {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
    }
}

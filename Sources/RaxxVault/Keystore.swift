import CSodium
import Foundation
import RaxxCore

#if canImport(Glibc)
    import Glibc
    import RaxxSecrets
#endif

/// What the keystore holds, for each server by its origin (scheme, host, port): this device's
/// passkey there (its private key sealed again under the PIN) and the session's tokens. A token is
/// only ever sent to the origin that issued it, and a passkey only signs for that server's RP ID.
public struct KeystoreContents: Codable, Sendable, Equatable {
    public var version = 2
    /// By origin (`https://api.raxx.app`, `http://127.0.0.1:8080`).
    public var servers: [String: ServerCredentials]
    /// A passkey kept from a version 1 keystore, which did not record its server: the first sign-in
    /// to a server whose RP ID it was made for binds it to that server. (Version 1 sessions are
    /// dropped: nothing said which server their tokens belong to.)
    public var unboundCredential: StoredCredential?

    public init(servers: [String: ServerCredentials] = [:], unboundCredential: StoredCredential? = nil) {
        self.servers = servers
        self.unboundCredential = unboundCredential
    }

    /// One server's entry (empty when the device holds nothing for it).
    public subscript(origin: String) -> ServerCredentials {
        get { servers[origin] ?? ServerCredentials() }
        set { servers[origin] = newValue.isEmpty ? nil : newValue }
    }

    /// Nothing for any server.
    public var isEmpty: Bool { servers.isEmpty && unboundCredential == nil }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: KeystoreKey.self)
        let version = try c.decodeIfPresent(Int.self, forKey: .version) ?? 1
        if version == 1 {
            servers = [:]
            unboundCredential = try c.decodeIfPresent(StoredCredential.self, forKey: .credential)
        } else {
            servers = try c.decodeIfPresent([String: ServerCredentials].self, forKey: .servers) ?? [:]
            unboundCredential = try c.decodeIfPresent(StoredCredential.self, forKey: .unboundCredential)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: KeystoreKey.self)
        try c.encode(version, forKey: .version)
        try c.encode(servers, forKey: .servers)
        try c.encodeIfPresent(unboundCredential, forKey: .unboundCredential)
    }
}

/// What the device holds for one server.
public struct ServerCredentials: Codable, Sendable, Equatable {
    public var credential: StoredCredential?
    public var session: StoredSession?

    public init(credential: StoredCredential? = nil, session: StoredSession? = nil) {
        self.credential = credential
        self.session = session
    }

    public var isEmpty: Bool { credential == nil && session == nil }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: KeystoreKey.self)
        credential = try c.decodeIfPresent(StoredCredential.self, forKey: .credential)
        session = try c.decodeIfPresent(StoredSession.self, forKey: .session)
    }
}

/// A passkey of the software authenticator.
public struct StoredCredential: Codable, Sendable, Equatable {
    public var credentialID: String  // base64url
    public var rpID: String
    public var userHandle: String  // base64url
    public var email: String
    public var publicKey: String  // base64url, X9.63 uncompressed P-256 point
    public var sealedPrivateKey: String  // base64url: nonce ‖ XChaCha20-Poly1305(private key) under the PIN key
    public var pinSalt: String  // base64url
    public var pinOpsLimit: UInt64
    public var pinMemLimit: UInt64
    public var signCount: UInt32
    public var failedPINAttempts: Int
    public var createdAt: Date
}

extension StoredCredential {
    // In an extension: the memberwise initializer stays.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: KeystoreKey.self)
        credentialID = try c.decode(String.self, forKey: .credentialID)
        rpID = try c.decode(String.self, forKey: .rpID)
        userHandle = try c.decode(String.self, forKey: .userHandle)
        email = try c.decode(String.self, forKey: .email)
        publicKey = try c.decode(String.self, forKey: .publicKey)
        sealedPrivateKey = try c.decode(String.self, forKey: .sealedPrivateKey)
        pinSalt = try c.decode(String.self, forKey: .pinSalt)
        pinOpsLimit = try c.decode(UInt64.self, forKey: .pinOpsLimit)
        pinMemLimit = try c.decode(UInt64.self, forKey: .pinMemLimit)
        signCount = try c.decode(UInt32.self, forKey: .signCount)
        failedPINAttempts = try c.decode(Int.self, forKey: .failedPINAttempts)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
    }
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
    /// When the access token was received (its lifetime decides how early it is renewed).
    public var accessIssuedAt: Date?

    public init(
        email: String, accountID: String, accessToken: String, accessExpiresAt: Date,
        renewalToken: String, sessionExpiresAt: Date, signedInAt: Date, accessIssuedAt: Date? = nil
    ) {
        self.email = email
        self.accountID = accountID
        self.accessToken = accessToken
        self.accessExpiresAt = accessExpiresAt
        self.renewalToken = renewalToken
        self.sessionExpiresAt = sessionExpiresAt
        self.signedInAt = signedInAt
        self.accessIssuedAt = accessIssuedAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: KeystoreKey.self)
        email = try c.decode(String.self, forKey: .email)
        accountID = try c.decode(String.self, forKey: .accountID)
        accessToken = try c.decode(String.self, forKey: .accessToken)
        accessExpiresAt = try c.decode(Date.self, forKey: .accessExpiresAt)
        renewalToken = try c.decode(String.self, forKey: .renewalToken)
        sessionExpiresAt = try c.decode(Date.self, forKey: .sessionExpiresAt)
        signedInAt = try c.decode(Date.self, forKey: .signedInAt)
        accessIssuedAt = try c.decodeIfPresent(Date.self, forKey: .accessIssuedAt)
    }
}

/// Every key of the keystore's JSON, for all four types' decoding: each type with keys of its own
/// made the runtime scan every conformance record of the program once more (a tenth of a
/// millisecond each) on every start that reads the keystore. Encoding keeps the synthesized keys,
/// whose names these are (a test holds the two together).
enum KeystoreKey: String, CodingKey {
    // KeystoreContents
    case version, servers, unboundCredential
    // ServerCredentials (and a version 1 keystore's top level: its one credential and session)
    case credential, session
    // StoredCredential
    case credentialID, rpID, userHandle, email, publicKey, sealedPrivateKey, pinSalt, pinOpsLimit, pinMemLimit, signCount
    case failedPINAttempts, createdAt
    // StoredSession (and email)
    case accountID, accessToken, accessExpiresAt, renewalToken, sessionExpiresAt, signedInAt, accessIssuedAt
}

/// One file, sealed with XChaCha20-Poly1305 under the device key.
///
/// Layout: magic (8) ‖ key fingerprint (16) ‖ nonce (24) ‖ ciphertext+tag ‖ BLAKE2b checksum (32).
/// The checksum tells a damaged file; the fingerprint tells a file sealed on another machine.
public struct Keystore: KeystoreAccess {
    /// The folder the keystore and the device's secret live in, as a path (URL's path handling
    /// costs an offline read that only looks at the keystore's time a tenth of its run).
    public let directoryPath: String
    /// The folder, as a URL.
    public var directory: URL { URL(fileURLWithPath: directoryPath, isDirectory: true) }
    private let machineIDPath: String?

    /// The keystore's file, as a path: a read makes no URL.
    public var path: String { RaxxConfiguration.joined(directoryPath, "keystore") }
    public var url: URL { URL(fileURLWithPath: path) }
    public var deviceKey: DeviceKey {
        DeviceKey(secretPath: RaxxConfiguration.joined(directoryPath, "device.secret"), machineIDPath: machineIDPath, folders: folders)
    }
    /// The rule its folder, files and lock are held to: the configuration's (`RAXX_HOME` or the
    /// XDG state folder down), or, by default, the keystore's folder as its own root.
    public let folders: PrivateFolders

    static let magic: [UInt8] = Array("RAXXKS".utf8) + [0, 1]

    /// How long a second process waits for the keystore's lock.
    public let lockWait: RaxxDuration

    public init(directory: URL, machineIDPath: String? = nil, lockWait: RaxxDuration = .seconds(10), folders: PrivateFolders? = nil) {
        self.init(directoryPath: directory.path, machineIDPath: machineIDPath, lockWait: lockWait, folders: folders)
    }

    public init(directoryPath: String, machineIDPath: String? = nil, lockWait: RaxxDuration = .seconds(10), folders: PrivateFolders? = nil) {
        self.directoryPath = directoryPath
        self.machineIDPath = machineIDPath
        self.lockWait = lockWait
        self.folders = folders ?? PrivateFolders(roots: [directoryPath])
    }

    public var exists: Bool { SecureFile.exists(path: path) }

    public var location: String { path }

    public var changedAt: ChangeStamp? { ChangeStamp.ofFile(path) }

    /// The contents, or empty contents when there is no keystore yet.
    public func load() throws(RaxxError) -> KeystoreContents {
        // Its folders first: a keystore found through a link, or in a folder another may write, is
        // never read.
        guard try folders.folder(directoryPath, create: false), exists else { return KeystoreContents() }
        Hardening.disableCoreDumps()
        try SecureFile.checkPrivate(path: directoryPath, isDirectory: true)
        try SecureFile.checkPrivate(path: path)
        let file = try SecureFile.read(path: path)
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
            throw RaxxError(
                code: .keystoreOtherMachine, message: "The keystore at \(path) was sealed on another machine and cannot be opened here.",
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
        var json = plain.withUnsafeBytes { Array($0) }
        defer { json.withUnsafeMutableBytes { if let b = $0.baseAddress { sodium_memzero(b, $0.count) } } }
        if let contents = KeystoreContents(directJSON: json) { return contents }
        do {
            return try Self.decoder.decode(KeystoreContents.self, from: Data(json))
        } catch {
            throw damaged
        }
    }

    /// Seals and writes `contents` atomically (creating the device secret on first use).
    public func save(_ contents: KeystoreContents) throws(RaxxError) {
        Hardening.disableCoreDumps()
        try SecureFile.ensureDirectory(directory, in: folders)
        let key = try deviceKey.keystoreKey(create: true)
        defer { key.wipe() }
        var json: Data
        do { json = try Self.encoder.encode(contents) } catch {
            throw RaxxError(code: .internal, message: "Could not encode the keystore: \(error)")
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
        try SecureFile.writeAtomically(SecretBytes(copying: body + Self.checksum(body)), to: url, in: folders)
    }

    /// Removes the keystore file (the device secret stays, for the next one).
    public func destroy() throws(RaxxError) {
        guard try folders.folder(directoryPath, create: false), exists else { return }
        guard unlink(path) == 0 else {
            throw RaxxError(code: .keystoreUnwritable, message: "Could not remove \(path): \(String(cString: strerror(errno))).")
        }
    }

    /// Runs `body` holding the keystore's lock (`keystore.lock` beside it), waiting up to
    /// `lockWait` for another process to finish.
    public func withLock<T>(_ body: () async throws -> T) async throws -> T {
        try SecureFile.ensureDirectory(directory, in: folders)
        let lock = try await FileLock.acquire(
            path: RaxxConfiguration.joined(directoryPath, "keystore.lock"), in: folders, wait: lockWait,
            busy: RaxxError(code: .keystoreBusy, message: "Another raxx process is updating the keystore."))
        defer { lock.release() }
        return try await body()
    }

    private var damaged: RaxxError {
        RaxxError(
            code: .keystoreDamaged, message: "The keystore at \(path) is damaged and cannot be opened.",
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
    /// No core dumps, and no ptrace or /proc/PID/mem reads by other processes of the same user
    /// (PR_SET_DUMPABLE 0): a crash or a debugger must not carry keys, PINs or tokens off. Every
    /// tool calls this first, before anything is read; the keystore calls it again.
    public static func disableCoreDumps() {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
        #if os(Linux)
            _ = linuxPrctl(prSetDumpable, 0, 0, 0, 0)
        #endif
    }

    /// Whether this process may dump core or be inspected (for tests).
    public static var isDumpable: Bool {
        #if os(Linux)
            return linuxPrctl(prGetDumpable, 0, 0, 0, 0) != 0
        #else
            return true
        #endif
    }
}

#if os(Linux)
    // prctl(2), which the Glibc module does not export (it lives in <sys/prctl.h>).
    @_silgen_name("prctl")
    private func linuxPrctl(_ option: Int32, _ arg2: UInt, _ arg3: UInt, _ arg4: UInt, _ arg5: UInt) -> Int32
    private let prGetDumpable: Int32 = 3
    private let prSetDumpable: Int32 = 4
#endif

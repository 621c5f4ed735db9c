import Foundation
import RaxxAge
import RaxxCore
import RaxxWire

#if canImport(Glibc)
    import Glibc
#endif

/// A server's receipt key as raxx-dsr keeps it after first use (trust on first use, per server):
/// later receipts from that server must verify against this very key.
public struct KeptReceiptKey: Codable, Sendable, Equatable {
    public var origin: String
    public var algorithm: String
    public var key_id: String
    /// The raw 32-byte Ed25519 public key, base64url.
    public var public_key: String
    /// RFC 3339.
    public var kept_at: String

    public init(origin: String, algorithm: String, keyID: String, publicKey: String, keptAt: Date) {
        self.origin = origin
        self.algorithm = algorithm
        key_id = keyID
        public_key = publicKey
        kept_at = RFC3339.string(from: keptAt)
    }
}

/// The files raxx-dsr touches: exports it writes (never over another file), receipts it reads, and
/// the receipt key it keeps per server. Commands reach them only through their context's
/// services; `FileDSRFiles` is the live set, tests give their own.
public protocol DSRFiles: Sendable {
    /// Creates `path` (mode 0600, failing if anything is there already) and writes `data`.
    func writeNew(path: String, data: Data) throws(RaxxError)
    /// A file's bytes (at most `limit`).
    func read(path: String, limit: Int) throws(RaxxError) -> Data
    /// The receipt key kept for `origin`, if any.
    func keptReceiptKey(origin: String) throws(RaxxError) -> KeptReceiptKey?
    /// Keeps `key` for its origin.
    func keep(_ key: KeptReceiptKey) throws(RaxxError)
    /// A passphrase from an open file descriptor (`--passphrase-fd N`), up to its first newline.
    func passphrase(fd: Int32) throws(RaxxError) -> AgePassphrase
    /// A passphrase asked on the controlling terminal (`--passphrase`): hidden, twice, with its
    /// rule said first in `prompt`.
    func askPassphrase(prompt: String) throws(RaxxError) -> AgePassphrase
}

/// The live files: exports where the staff member says, the receipt key beside the keystore in
/// the server's state folder (`state/<server>/dsr-receipt-key.json`, 0600 in a 0700 folder).
public struct FileDSRFiles: DSRFiles {
    /// The configured server's state folder: the only server whose key this process keeps.
    let serverDirectory: URL
    let origin: String
    /// The rule the server's folder and the key's file are held to.
    let folders: PrivateFolders

    public init(_ configuration: RaxxConfiguration) {
        serverDirectory = configuration.stateDirectory.appendingPathComponent(configuration.endpoint.storageKey, isDirectory: true)
        origin = configuration.endpoint.origin
        folders = PrivateFolders(configuration)
    }

    public func writeNew(path: String, data: Data) throws(RaxxError) {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            let reason = errno == EEXIST ? "it exists already, and an export is never written over a file" : String(cString: strerror(errno))
            throw RaxxError(code: .exportUnwritable, message: "Could not create \(path): \(reason).", hint: "Name a new file with --out.")
        }
        defer { Glibc.close(fd) }
        // The mode asked for is subject to the umask: make sure it is 0600 whatever the umask.
        _ = fchmod(fd, 0o600)
        var offset = 0
        let failed: Int32? = data.withUnsafeBytes { raw -> Int32? in
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return nil
        }
        if let failed {
            unlink(path)
            throw RaxxError(code: .exportUnwritable, message: "Could not write \(path): \(String(cString: strerror(failed))).")
        }
        guard fsync(fd) == 0 else {
            unlink(path)
            throw RaxxError(code: .exportUnwritable, message: "Could not write \(path) to disk: \(String(cString: strerror(errno))).")
        }
    }

    public func read(path: String, limit: Int) throws(RaxxError) -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw RaxxError.badInput(field: "file", "cannot open \(path)")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: limit + 1)) ?? nil
        guard let data else { throw RaxxError.badInput(field: "file", "cannot read \(path)") }
        guard data.count <= limit else { throw RaxxError.badInput(field: "file", "\(path) is larger than \(limit) bytes") }
        return data
    }

    public func passphrase(fd: Int32) throws(RaxxError) -> AgePassphrase {
        try AgePassphrase.read(fromFileDescriptor: fd, what: "--passphrase-fd \(fd)")
    }

    public func askPassphrase(prompt: String) throws(RaxxError) -> AgePassphrase {
        let terminal = try ControllingTerminal(
            orElse: RaxxError.usage(
                "A passphrase is needed, and there is no terminal to ask for it.",
                hint: "Pass it on a file descriptor instead: --passphrase-fd N"))
        return try AgePassphrase.ask(on: terminal, prompt: prompt, again: "Repeat the passphrase: ")
    }

    var keyFile: URL { serverDirectory.appendingPathComponent("dsr-receipt-key.json") }

    public func keptReceiptKey(origin: String) throws(RaxxError) -> KeptReceiptKey? {
        guard origin == self.origin else { return nil }
        let file = keyFile
        guard try folders.file(file.path, create: false), FileManager.default.fileExists(atPath: file.path) else { return nil }
        guard let data = try? Data(contentsOf: file), let key = try? JSONDecoder().decode(KeptReceiptKey.self, from: data),
            key.origin == origin
        else {
            throw RaxxError(code: .receiptKeyUnreadable, message: "The receipt key kept for \(origin) cannot be read (\(file.path)).")
        }
        return key
    }

    public func keep(_ key: KeptReceiptKey) throws(RaxxError) {
        guard key.origin == origin else { throw RaxxError(code: .internal, message: "A receipt key of another server: \(key.origin).") }
        let file = keyFile
        let directory = file.deletingLastPathComponent()
        try folders.folder(directory.path)
        let temporary = directory.appendingPathComponent(".dsr-receipt-key.\(getpid()).tmp")
        unlink(temporary.path)
        guard let data = try? JSONLines.encoder().encode(key) else {
            throw RaxxError(code: .internal, message: "Could not encode the receipt key.")
        }
        try writeNew(path: temporary.path, data: data)
        guard rename(temporary.path, file.path) == 0 else {
            unlink(temporary.path)
            throw RaxxError(code: .receiptKeyUnwritable, message: "Could not keep the receipt key in \(file.path).")
        }
    }
}

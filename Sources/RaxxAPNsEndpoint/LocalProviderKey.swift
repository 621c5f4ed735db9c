import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A provider key for the local endpoint, made as Apple's developer account makes one: a P-256
/// private key in PKCS #8 (`AuthKey_KEYID.p8`, the owner's alone, 0600) and a ten-character key ID,
/// with its public key beside it (`AuthKey_KEYID.pub.pem`) for the endpoint's `--public-key`.
/// A real key comes from Apple (Certificates, Identifiers & Profiles → Keys) and is never committed.
public struct LocalProviderKey: Sendable {
    public let keyID: String
    public let privateKeyPath: String
    public let publicKeyPath: String

    public enum Failure: Error, CustomStringConvertible {
        case cannotWrite(String, String)
        public var description: String {
            switch self {
            case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
            }
        }
    }

    /// Makes a new key in `directory` (made 0700 when absent); never writes over a file.
    public static func make(in directory: String) throws -> LocalProviderKey {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        let keyID = String((0..<10).map { _ in letters[Int(generator.next(upperBound: UInt64(letters.count)))] })
        let key = P256.Signing.PrivateKey()
        if !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
            } catch {
                throw Failure.cannotWrite(directory, "\(error.localizedDescription)")
            }
        }
        let base = (directory as NSString).appendingPathComponent("AuthKey_\(keyID)")
        let made = LocalProviderKey(keyID: keyID, privateKeyPath: base + ".p8", publicKeyPath: base + ".pub.pem")
        try write(key.pemRepresentation + "\n", to: made.privateKeyPath, mode: 0o600)
        try write(key.publicKey.pemRepresentation + "\n", to: made.publicKeyPath, mode: 0o644)
        return made
    }

    /// Creates `path` with `mode` (O_EXCL, no link followed) and writes `text`.
    static func write(_ text: String, to path: String, mode: mode_t) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure.cannotWrite(path, String(cString: strerror(errno))) }
        defer { close(fd) }
        fchmod(fd, mode)  // whatever the umask
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw Failure.cannotWrite(path, String(cString: strerror(errno))) }
    }
}

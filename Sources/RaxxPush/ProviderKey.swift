import Crypto
import Foundation
import RaxxCore
import RaxxSecrets

#if canImport(Glibc)
    import Glibc
#endif

/// The APNs signing key (Apple's AuthKey_KEYID.p8: a P-256 private key in PKCS#8 PEM), read from
/// a file given by path — never from argv or the environment.
public enum ProviderKey {
    /// Reads and parses the key at `path`. A file group or others may read (not 0600 or stricter)
    /// or another user's is refused with exit 77: the key is not used, whatever it holds (as
    /// ssh does with a private key). A file that is not such a key exits 65 (bad input). The
    /// file's bytes are wiped once parsed.
    public static func load(path: String) throws(RaxxError) -> P256.Signing.PrivateKey {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw RaxxError.badInput(field: "--key-file", "could not read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw RaxxError.badInput(field: "--key-file", "\(path) is not a file")
        }
        guard st.st_mode & 0o077 == 0 else {
            throw RaxxError(
                code: .keyFilePermissions, message: "The key file \(path) can be read by other users; refusing to use it.",
                hint: "Fix it with: chmod 600 \(path) (and consider the key exposed: rotate it).")
        }
        guard st.st_uid == getuid() else {
            throw RaxxError(code: .keyFilePermissions, message: "The key file \(path) belongs to another user; refusing to use it.")
        }
        let size = Int(st.st_size)
        guard size > 0, size <= 16 << 10 else { throw notAKey(path) }
        let bytes = SecretBytes(count: size)
        defer { bytes.wipe() }
        let complete = bytes.withUnsafeMutableBytes { b -> Bool in
            var got = 0
            while got < size {
                let n = read(fd, b.baseAddress! + got, size - got)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                got += n
            }
            return true
        }
        guard complete else { throw RaxxError.badInput(field: "--key-file", "could not read \(path)") }
        return try parse(pem: bytes, path: path)
    }

    /// Parses a PKCS#8 PEM P-256 private key held in `pem` (decoded into wiped memory).
    public static func parse(pem: SecretBytes, path: String = "the key") throws(RaxxError) -> P256.Signing.PrivateKey {
        let der = SecretBytes(count: pem.count)
        defer { der.wipe() }
        let length: Int? = pem.withUnsafeBytes { text in
            der.withUnsafeMutableBytes { out in decodeBody(text, into: out) }
        }
        guard let length, length > 0 else { throw notAKey(path) }
        do {
            return try der.withUnsafeBytes { try P256.Signing.PrivateKey(derRepresentation: UnsafeRawBufferPointer(rebasing: $0[..<length])) }
        } catch {
            throw notAKey(path)
        }
    }

    private static func notAKey(_ path: String) -> RaxxError {
        RaxxError.badInput(field: "--key-file", "\(path) is not an APNs signing key (a P-256 private key in PKCS#8 PEM, as Apple's .p8 files are)")
    }

    /// Base64-decodes what lies between `-----BEGIN PRIVATE KEY-----` and `-----END PRIVATE KEY-----`
    /// into `out`; answers the length, or nil when the text is not such a block.
    static func decodeBody(_ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int? {
        let begin = Array("-----BEGIN PRIVATE KEY-----".utf8)
        let end = Array("-----END PRIVATE KEY-----".utf8)
        guard let start = find(begin, in: text, from: 0), let stop = find(end, in: text, from: start + begin.count) else { return nil }
        var accumulator: UInt32 = 0
        var bits = 0
        var count = 0
        var padding = false
        for i in (start + begin.count)..<stop {
            let c = text[i]
            let value: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): padding = true; continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return nil
            }
            guard !padding else { return nil }
            accumulator = (accumulator << 6) | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                guard count < out.count else { return nil }
                out[count] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                count += 1
            }
        }
        accumulator = 0
        return count
    }

    private static func find(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var i = from
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0] && (0..<needle.count).allSatisfy({ haystack[i + $0] == needle[$0] }) { return i }
            i += 1
        }
        return nil
    }
}

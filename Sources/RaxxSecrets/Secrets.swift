import CSodium
import RaxxCore

/// libsodium, initialised once per process before any use (the keystore, age files and provider keys
/// share it).
public enum Sodium {
    private static let ready: Bool = { sodium_init() >= 0 }()

    /// Initialises libsodium; fails only if the library cannot run on this machine.
    public static func ensureReady() throws(RaxxError) {
        guard ready else {
            throw RaxxError(code: .sodiumUnavailable, message: "The cryptography library could not start on this machine.")
        }
    }

    /// `count` bytes from the operating system's secure random source.
    public static func randomBytes(_ count: Int) throws(RaxxError) -> SecretBytes {
        try ensureReady()
        let secret = SecretBytes(count: count)
        secret.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
        return secret
    }
}

/// Bytes that must not outlive their use: a key, a token, a PIN. The memory is wiped with
/// `sodium_memzero` when the owner is done (or at the latest when the value is freed), and is never
/// printed.
public final class SecretBytes: @unchecked Sendable, CustomStringConvertible {
    private var storage: UnsafeMutableRawBufferPointer

    public init(count: Int) {
        storage = .allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        if count == 0 { storage = UnsafeMutableRawBufferPointer(start: storage.baseAddress, count: 0) }
    }

    /// Copies `bytes`; wipe the caller's copy if it was secret too.
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count)
        _ = storage.initializeMemory(as: UInt8.self, from: bytes)
    }

    public var count: Int { storage.count }

    /// The bytes themselves, for a C call or a copy into them; valid while this value lives.
    public var bytes: UnsafeMutableRawBufferPointer { storage }

    /// The bytes, read-only; valid while this value lives.
    public var readable: UnsafeRawBufferPointer { UnsafeRawBufferPointer(storage) }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(storage)
    }

    /// Zeroes the bytes now; the value stays usable as all zeroes.
    public func wipe() {
        if let base = storage.baseAddress { sodium_memzero(base, storage.count) }
    }

    /// Constant-time comparison.
    public func isEqual(to other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { a in other.withUnsafeBytes { b in a.count == 0 || sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    public var description: String { "SecretBytes(\(count) bytes, redacted)" }

    deinit {
        wipe()
        storage.deallocate()
    }
}

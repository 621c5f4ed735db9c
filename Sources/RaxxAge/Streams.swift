import RaxxCore

/// Where encrypted bytes go: `AgeMemorySink`, or a sink of the caller's (the tests' writes to a
/// file). `AgeEncryptor` is one too, so a writer can be pointed at a sink or through encryption alike.
public protocol AgeSink {
    /// Writes all of `bytes` or throws.
    func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError)
}

/// Collects bytes in memory: an age file small enough to hold whole (raxx-dsr's sealed export, and
/// the tests'). The bytes are ciphertext, kept as written and not wiped.
public final class AgeMemorySink: AgeSink, @unchecked Sendable {
    public private(set) var bytes: [UInt8] = []
    public init() {}
    public func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError) { self.bytes.append(contentsOf: bytes) }
}

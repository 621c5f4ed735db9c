import Foundation
import RaxxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where encrypted bytes go. `AgeEncryptor` is one too, so a writer can be pointed at a plain file
/// or through encryption alike.
public protocol AgeSink {
    /// Writes all of `bytes` or throws.
    func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError)
}

/// Writes straight to a file descriptor the caller opened (and closes); unbuffered, so each
/// encrypted chunk is written as it is sealed.
public struct AgeFileDescriptorSink: AgeSink, Sendable {
    public let fd: Int32
    public init(fd: Int32) { self.fd = fd }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError) {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            #else
                let n = Darwin.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            #endif
            if n < 0 {
                if errno == EINTR { continue }
                throw RaxxError(code: .writeFailed, message: "Could not write the file: \(String(cString: strerror(errno))).")
            }
            offset += n
        }
    }
}

/// Collects bytes in memory: an age file small enough to hold whole (raxx-dsr's sealed export, and
/// the tests'). The bytes are ciphertext, kept as written and not wiped.
public final class AgeMemorySink: AgeSink, @unchecked Sendable {
    public private(set) var bytes: [UInt8] = []
    public init() {}
    public func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError) { self.bytes.append(contentsOf: bytes) }
}

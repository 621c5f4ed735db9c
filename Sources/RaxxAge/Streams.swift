import Foundation
import RaxxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where encrypted (or decrypted) bytes go. `AgeEncryptor` is one too, so a writer can be pointed
/// at a plain file or through encryption alike.
public protocol AgeSink {
    /// Writes all of `bytes` or throws.
    func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError)
}

/// Where an age file is read from.
public protocol AgeSource {
    /// Reads at most `buffer.count` bytes into `buffer`; 0 only at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RaxxError) -> Int
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

/// Reads from a file descriptor the caller opened (and closes).
public struct AgeFileDescriptorSource: AgeSource, Sendable {
    public let fd: Int32
    public init(fd: Int32) { self.fd = fd }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(RaxxError) -> Int {
        guard buffer.count > 0 else { return 0 }
        while true {
            #if canImport(Glibc)
                let n = Glibc.read(fd, buffer.baseAddress!, buffer.count)
            #else
                let n = Darwin.read(fd, buffer.baseAddress!, buffer.count)
            #endif
            if n < 0 {
                if errno == EINTR { continue }
                throw RaxxError(code: .readFailed, message: "Could not read the file: \(String(cString: strerror(errno))).")
            }
            return n
        }
    }
}

/// Collects bytes in memory (tests, small documents).
public final class AgeMemorySink: AgeSink, @unchecked Sendable {
    public private(set) var bytes: [UInt8] = []
    public init() {}
    public func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError) { self.bytes.append(contentsOf: bytes) }
}

/// Reads from bytes in memory.
public final class AgeMemorySource: AgeSource, @unchecked Sendable {
    private let bytes: [UInt8]
    private var offset = 0
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(RaxxError) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        if n > 0 {
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
        }
        offset += n
        return n
    }
}

import Foundation
import RaxxCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Somewhere text goes: a file descriptor, or a buffer in tests.
public protocol TextSink: AnyObject, Sendable {
    func write(_ text: String)
    func write(bytes: UnsafeRawBufferPointer)
    func flush()
}

extension TextSink {
    public func write(bytes: UnsafeRawBufferPointer) { write(String(decoding: bytes, as: UTF8.self)) }
}

/// Buffered writes to a file descriptor (stdout, stderr).
public final class FileDescriptorSink: TextSink, @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private let capacity: Int

    public init(fd: Int32, capacity: Int = 64 << 10) {
        self.fd = fd
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
    }

    public func write(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= capacity { drain() }
    }

    public func write(bytes: UnsafeRawBufferPointer) {
        lock.lock()
        defer { lock.unlock() }
        buffer.append(contentsOf: bytes)
        if buffer.count >= capacity { drain() }
    }

    public func flush() {
        lock.lock()
        defer { lock.unlock() }
        drain()
    }

    private func drain() {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                break // the reader went away; nothing more to say to it
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Collects text in memory (tests).
public final class CapturedSink: TextSink, @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    public init() {}
    public func write(_ s: String) { lock.lock(); text += s; lock.unlock() }
    public func flush() {}
    public var contents: String { lock.lock(); defer { lock.unlock() }; return text }
}

/// Where input comes from: standard input, or a string in tests.
public protocol InputSource: Sendable {
    /// Everything up to the end of the input.
    func readAll() throws(RaxxError) -> [UInt8]
    /// One line (without its newline), or nil at the end of the input: an answer typed at a prompt.
    func readLine() throws(RaxxError) -> String?
}

extension InputSource {
    public func readLine() throws(RaxxError) -> String? {
        let bytes = try readAll()
        guard !bytes.isEmpty else { return nil }
        return String(decoding: bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).first ?? [], as: UTF8.self)
    }
}

/// Reads a file descriptor to its end (standard input).
public struct FileDescriptorSource: InputSource {
    let fd: Int32
    public init(fd: Int32) { self.fd = fd }

    public func readAll() throws(RaxxError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw RaxxError.failure(code: "input_unreadable", "Could not read standard input: \(String(cString: strerror(errno))).")
            }
            if n == 0 { return bytes }
            bytes += chunk[..<n]
        }
    }

    /// Reads a byte at a time up to the newline, so nothing after it is consumed.
    public func readLine() throws(RaxxError) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = Foundation.read(fd, &byte, 1)
            if n < 0 {
                if errno == EINTR { continue }
                throw RaxxError.failure(code: "input_unreadable", "Could not read standard input: \(String(cString: strerror(errno))).")
            }
            if n == 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}

/// A command's standard streams, and whether each is a terminal.
public struct CommandIO: Sendable {
    public var stdin: any InputSource
    public var stdout: any TextSink
    public var stderr: any TextSink
    public var stdoutIsTTY: Bool
    public var stderrIsTTY: Bool
    public var stdinIsTTY: Bool

    public init(stdin: any InputSource, stdout: any TextSink, stderr: any TextSink, stdoutIsTTY: Bool, stderrIsTTY: Bool,
                stdinIsTTY: Bool) {
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.stdoutIsTTY = stdoutIsTTY
        self.stderrIsTTY = stderrIsTTY
        self.stdinIsTTY = stdinIsTTY
    }

    public static func standard() -> CommandIO {
        CommandIO(
            stdin: FileDescriptorSource(fd: 0),
            stdout: FileDescriptorSink(fd: 1),
            stderr: FileDescriptorSink(fd: 2, capacity: 0),
            stdoutIsTTY: isatty(1) == 1,
            stderrIsTTY: isatty(2) == 1,
            stdinIsTTY: isatty(0) == 1
        )
    }

    public func flush() {
        stdout.flush()
        stderr.flush()
    }
}

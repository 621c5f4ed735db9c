import Foundation
import RaxxCore
import Synchronization

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
    /// Why writing failed, the first time it did (a full disk, a closed descriptor): what was
    /// written since is lost, and a command that wrote its data here has not delivered it.
    var failure: String? { get }
}

extension TextSink {
    public func write(bytes: UnsafeRawBufferPointer) { write(String(decoding: bytes, as: UTF8.self)) }
    public var failure: String? { nil }
}

/// Buffered writes to a file descriptor (stdout, stderr).
// @unchecked: keeps NSLock held across write(2), so concurrent writers' text reaches the descriptor whole and in order.
public final class FileDescriptorSink: TextSink, @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private let capacity: Int
    private var firstFailure: String?

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

    public var failure: String? {
        lock.lock()
        defer { lock.unlock() }
        return firstFailure
    }

    private func drain() {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                let error = errno
                if error == EINTR { continue }
                // A reader that went away (EPIPE) is no failure: `| head` wanted no more. Anything
                // else (ENOSPC, EBADF, EIO) lost the data.
                if error != EPIPE && firstFailure == nil { firstFailure = String(cString: strerror(error)) }
                break
            }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Collects text in memory (tests).
public final class CapturedSink: TextSink, Sendable {
    private let state = Mutex(State())

    private struct State {
        var text = ""
        var failure: String?
    }

    /// A write failure to report (a test's full disk); the text is still captured.
    public var failure: String? {
        get { state.withLock { $0.failure } }
        set { state.withLock { $0.failure = newValue } }
    }
    public init() {}
    public func write(_ s: String) { state.withLock { $0.text += s } }
    public func flush() {}
    public var contents: String { state.withLock { $0.text } }
}

/// Where input comes from: standard input, or a string in tests.
public protocol InputSource: Sendable {
    /// Everything up to the end of the input.
    func readAll() throws(RaxxError) -> [UInt8]
    /// One line (without its newline), or nil at the end of the input: an answer typed at a prompt.
    func readLine() throws(RaxxError) -> String?
    /// The next bytes (at most `buffer.count`, waiting for some), or 0 at the end: for a filter
    /// that reads its input as it comes, in bounded memory.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RaxxError) -> Int
}

extension InputSource {
    /// Reads a byte at a time up to the newline, so that nothing after the line is taken from the
    /// input (a prompt's answer on a terminal, or one line of a pipe).
    public func readLine() throws(RaxxError) -> String? {
        var line: [UInt8] = []
        let byte = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
        defer { byte.deallocate() }
        while true {
            let n = try read(into: byte)
            if n == 0 { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte[0] == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte[0])
        }
    }
}

/// Reads a file descriptor to its end (standard input).
public struct FileDescriptorSource: InputSource {
    let fd: Int32
    public init(fd: Int32) { self.fd = fd }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(RaxxError) -> Int {
        while true {
            let n = Foundation.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw RaxxError(code: .inputUnreadable, message: "Could not read standard input: \(String(cString: strerror(errno))).")
        }
    }

    public func readAll() throws(RaxxError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw RaxxError(code: .inputUnreadable, message: "Could not read standard input: \(String(cString: strerror(errno))).")
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
                throw RaxxError(code: .inputUnreadable, message: "Could not read standard input: \(String(cString: strerror(errno))).")
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
    /// The height of the terminal stdout is, when it is one.
    public var terminalRows: Int?
    /// The width of the terminal stdout is, when it is one: tables are fitted to it.
    public var terminalColumns: Int?
    /// Shows `text` through the pager `command` (a shell command line) and waits for it to end;
    /// false when it could not be started (the caller writes the text itself).
    public var page: (@Sendable (_ text: String, _ command: String) -> Bool)?

    public init(
        stdin: any InputSource, stdout: any TextSink, stderr: any TextSink, stdoutIsTTY: Bool, stderrIsTTY: Bool,
        stdinIsTTY: Bool, terminalRows: Int? = nil, terminalColumns: Int? = nil,
        page: (@Sendable (_ text: String, _ command: String) -> Bool)? = nil
    ) {
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.stdoutIsTTY = stdoutIsTTY
        self.stderrIsTTY = stderrIsTTY
        self.stdinIsTTY = stdinIsTTY
        self.terminalRows = terminalRows
        self.terminalColumns = terminalColumns
        self.page = page
    }

    public static func standard() -> CommandIO {
        let stdoutIsTTY = isatty(1) == 1
        return CommandIO(
            stdin: FileDescriptorSource(fd: 0),
            stdout: FileDescriptorSink(fd: 1),
            stderr: FileDescriptorSink(fd: 2, capacity: 0),
            stdoutIsTTY: stdoutIsTTY,
            stderrIsTTY: isatty(2) == 1,
            stdinIsTTY: isatty(0) == 1,
            terminalRows: stdoutIsTTY ? Pager.rows(fd: 1) : nil,
            terminalColumns: stdoutIsTTY ? Pager.columns(fd: 1) : nil,
            page: Pager.page
        )
    }

    public func flush() {
        stdout.flush()
        stderr.flush()
    }

    /// Throws `output_unwritable` when something written to standard output could not be (flush
    /// first): a command must not report success, nor record as delivered, what never arrived.
    public func checkOutput() throws(RaxxError) {
        guard let failure = stdout.failure else { return }
        throw RaxxError(
            code: .outputUnwritable, message: "Could not write to standard output: \(failure).",
            hint: "What the command did is done (orders placed stay placed); only its output is incomplete. "
                + "Check where it goes (a full disk, a closed descriptor) before running it again.")
    }
}

/// Lines of an input as they come, read on a thread of their own (a filter's input may wait for
/// its producer without holding one of the few cooperative threads), each at most `maxLineBytes`:
/// a longer line is skipped to its end and reported as too long, so memory stays bounded
/// whatever the input.
// @unchecked: one caller at a time (see `next()`), whose buffers its queue fills while that caller waits.
public final class InputLines: @unchecked Sendable {
    public struct Line: Sendable {
        /// 1-based.
        public var number: Int
        /// The line without its newline (empty when it was too long).
        public var bytes: [UInt8]
        public var tooLong: Bool

        public init(number: Int, bytes: [UInt8], tooLong: Bool = false) {
            self.number = number
            self.bytes = bytes
            self.tooLong = tooLong
        }
    }

    private let source: any InputSource
    private let maxLineBytes: Int
    private let queue = DispatchQueue(label: "raxx.input-lines")
    private var buffer: [UInt8] = []
    private var position = 0
    private var ended = false
    private var number = 0
    private var chunk: [UInt8]

    public init(_ source: any InputSource, maxLineBytes: Int = 1 << 20, chunkBytes: Int = 64 << 10) {
        self.source = source
        self.maxLineBytes = maxLineBytes
        chunk = [UInt8](repeating: 0, count: chunkBytes)
    }

    /// True when a whole line is already read (so `next()` will not wait).
    public var hasBufferedLine: Bool { buffer[position...].contains(10) || (ended && position < buffer.count) }

    /// The next line, or nil at the end of the input. Not for concurrent callers.
    public func next() async throws(RaxxError) -> Line? {
        var skipping = false
        while true {
            if let newline = buffer[position...].firstIndex(of: 10) {
                let line = Array(buffer[position..<newline])
                position = newline + 1
                compact()
                if skipping { number += 1; return Line(number: number, bytes: [], tooLong: true) }
                number += 1
                return Line(number: number, bytes: line.last == 13 ? Array(line.dropLast()) : line, tooLong: false)
            }
            if buffer.count - position > maxLineBytes {
                skipping = true
                buffer.removeAll(keepingCapacity: true)
                position = 0
            }
            if ended {
                guard position < buffer.count || skipping else { return nil }
                let line = Array(buffer[position...])
                buffer.removeAll()
                position = 0
                number += 1
                return skipping ? Line(number: number, bytes: [], tooLong: true) : Line(number: number, bytes: line, tooLong: false)
            }
            let n = try await fill()
            if n == 0 { ended = true }
        }
    }

    private func compact() {
        if position > 1 << 16 && position * 2 > buffer.count {
            buffer.removeFirst(position)
            position = 0
        }
    }

    private func fill() async throws(RaxxError) -> Int {
        let result: Result<Int, RaxxError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                continuation.resume(
                    returning: chunk.withUnsafeMutableBytes { b in
                        Result { () throws(RaxxError) -> Int in try source.read(into: b) }
                    })
            }
        }
        let n = try result.get()
        buffer.append(contentsOf: chunk[..<n])
        return n
    }
}

/// The pager of long tables on a terminal: `/bin/sh -c COMMAND` reading the table from a pipe,
/// writing to the terminal, waited for.
public enum Pager {
    /// The terminal's height, in rows.
    public static func rows(fd: Int32) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    public static func columns(fd: Int32) -> Int? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    @Sendable public static func page(_ text: String, command: String) -> Bool {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { return false }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[0], 0)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[1])
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        // less (as PAGER=less, without options) keeps the colours and quits on one screen with
        // these, unless the person set LESS themselves.
        setenv("LESS", "FRX", 0)
        let status = posix_spawn(&pid, "/bin/sh", &actions, nil, &argv, environ)
        close(pipeFDs[0])
        guard status == 0 else {
            close(pipeFDs[1])
            return false
        }
        // Ctrl-C belongs to the pager while it runs (as with git): this process waits for it.
        // A pager quit early (q) closes the pipe: the rest is not wanted, and is no error.
        let (previousPipe, previousInt, previousQuit) = (signal(SIGPIPE, SIG_IGN), signal(SIGINT, SIG_IGN), signal(SIGQUIT, SIG_IGN))
        defer {
            signal(SIGPIPE, previousPipe)
            signal(SIGINT, previousInt)
            signal(SIGQUIT, previousQuit)
        }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { write(pipeFDs[1], $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes = bytes.dropFirst(n)
        }
        close(pipeFDs[1])
        var exit: Int32 = 0
        while waitpid(pid, &exit, 0) == -1 && errno == EINTR {}
        // The shell could not run the pager (127: not found, 126: not executable): nothing was
        // shown, and the caller writes the table itself.
        let exited = exit & 0x7f == 0
        return !(exited && [126, 127].contains((exit >> 8) & 0xff))
    }
}

import Foundation
import RaxxCore
import RaxxWire

/// Where the built executables are: `RAXX_BIN_DIR`, or beside the test bundle (.build/debug).
public enum BuiltTools {
    public static var directory: URL {
        if let dir = ProcessInfo.processInfo.environment["RAXX_BIN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir, isDirectory: true)
        }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // …/debug/raxxPackageTests.xctest (a file on Linux, a bundle elsewhere)
        while url.pathComponents.count > 1 {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("raxx-sandbox").path) { return url }
        }
        return URL(fileURLWithPath: ".build/debug", isDirectory: true)
    }

    /// The tool as it is installed, which is what ships: a link named as the tool to the one
    /// suite executable (as Scripts/install and the package lay it out), in `installed-links/`
    /// beside the build; the tool's own executable for a name the suite does not answer to, or
    /// when no suite was built.
    public static func path(_ tool: String) -> String {
        guard suiteTools.contains(tool), let links = installedLinks else { return directory.appendingPathComponent(tool).path }
        return links.appendingPathComponent(tool).path
    }

    /// Where the tools are as installed (for a PATH): the links, or the build's folder.
    public static var toolsDirectory: URL { installedLinks ?? directory }

    /// The names the suite answers to.
    public static let suiteTools = ["raxx-auth", "raxx-cache", "raxx-order", "raxx-notify", "raxx-dsr", "raxx-sandbox"]

    /// The folder of links to the suite, made once per test process.
    static let installedLinks: URL? = {
        let suite = directory.appendingPathComponent("raxx-suite")
        guard FileManager.default.isExecutableFile(atPath: suite.path) else { return nil }
        let links = directory.appendingPathComponent("installed-links", isDirectory: true)
        try? FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
        for tool in suiteTools {
            let link = links.appendingPathComponent(tool).path
            if (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) != "../raxx-suite" {
                try? FileManager.default.removeItem(atPath: link)
                try? FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "../raxx-suite")
            }
        }
        return links
    }()
}

/// The outcome of running a tool.
public struct ToolResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Wall time, for reporting only (speed is checked by Scripts/bench, never by tests).
    public var seconds: Double
}

/// A small, controlled environment for a child tool: PATH, a HOME of no consequence, UTF-8.
public func childEnvironment(_ extra: [String: String]) -> [String: String] {
    ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "LANG": "C.UTF-8"].merging(extra) { _, new in new }
}

/// Runs built executables the way a shell would, with a controlled environment.
public enum ToolRunner {
    /// Runs `tool` with `arguments`; stdin gets `input` (or nothing), then what `later` answers
    /// (asked on a thread of its own while the tool runs; it is told whether the tool still runs:
    /// for what the tool is sent during its run, an emailed code). Kills it after `timeout` seconds.
    public static func run(
        _ tool: String, _ arguments: [String], environment: [String: String] = [:],
        input: String? = nil, later: (@Sendable (_ running: @Sendable () -> Bool) -> String?)? = nil,
        timeout: Double = 60
    ) throws -> ToolResult {
        signal(SIGPIPE, SIG_IGN)  // a tool that ends before reading its input must not end the tests
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltTools.path(tool))
        process.arguments = arguments
        process.environment = childEnvironment(environment)
        let out = Pipe(), err = Pipe(), inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inPipe
        let started = Date()
        try process.run()
        // Read both pipes while the process runs, so a chatty tool cannot block on a full pipe; from
        // before the input is written, which blocks once the input outgrows its pipe: a tool that
        // answers as it reads would otherwise fill stdout and stop reading stdin, and both wait.
        let outData = ReadAll(out.fileHandleForReading), errData = ReadAll(err.fileHandleForReading)
        // A tool that ends before reading all of its input closes the pipe: the rest is dropped
        // (EPIPE; the deprecated write(_:) crashed the test process on it).
        if let input { try? inPipe.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
        if let later {
            let writer = inPipe.fileHandleForWriting
            let running: @Sendable () -> Bool = { process.isRunning }
            let done = DispatchSemaphore(value: 0)
            Thread {
                if let text = later(running), process.isRunning { try? writer.write(contentsOf: Data(text.utf8)) }
                try? writer.close()
                done.signal()
            }.start()
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < deadline { usleep(5_000) }
            if process.isRunning { process.terminate(); process.waitUntilExit() }
            done.wait()
        } else {
            try? inPipe.fileHandleForWriting.close()
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        process.waitUntilExit()
        return ToolResult(
            status: process.terminationStatus, stdout: outData.wait(), stderr: errData.wait(),
            seconds: Date().timeIntervalSince(started))
    }
}

extension ToolRunner {
    /// What a session's end is waited for: its access token, or the whole session.
    public enum SessionEnd: String, Sendable {
        case accessToken = "access_expires_at"
        case session = "session_expires_at"
    }

    /// Waits until the signed-in session of `environment`'s home has passed `end`, as the keystore
    /// says (`raxx-auth status`, offline): a condition on the session, not a fixed sleep. Answers
    /// false when no such time was found or it did not pass within `timeout` seconds.
    @discardableResult
    public static func waitUntil(_ end: SessionEnd, environment: [String: String], timeout: Double = 60) throws -> Bool {
        let status = try run("raxx-auth", ["status", "--json"], environment: environment)
        let ends = status.stdout.split(separator: "\n").compactMap { line -> Date? in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            return (object?[end.rawValue] as? String).flatMap(RFC3339.date(from:))
        }
        guard let last = ends.max() else { return false }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() <= last.addingTimeInterval(0.05), Date() < deadline { usleep(20_000) }
        return Date() > last
    }

    /// Waits until `condition` holds, checking it every 20 ms, for at most `timeout` seconds:
    /// whether it held.
    public static func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { return false }
            usleep(20_000)
        }
        return true
    }

    /// Runs a program of the system (sqlite3, curl, age…) to its end: its status and stdout
    /// (stderr is discarded).
    public static func system(_ path: String, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// What `query` answers on the SQLite database at `path` (sqlite3, waiting up to 5 s for a
    /// writer's lock), trimmed: how end-to-end tests read a sandbox's state.
    public static func sqlite(_ path: String, _ query: String) throws -> String {
        try system("/usr/bin/sqlite3", ["-cmd", ".timeout 5000", path, query]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts `tool` in the background (output discarded), for tests that stop it midway.
    /// Its stderr goes to `stderr` when given (a file, read once it ends), else nowhere.
    public static func start(
        _ tool: String, _ arguments: [String], environment: [String: String] = [:],
        stderr: URL? = nil
    ) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltTools.path(tool))
        process.arguments = arguments
        process.environment = childEnvironment(environment)
        process.standardOutput = FileHandle.nullDevice
        if let stderr {
            FileManager.default.createFile(atPath: stderr.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: stderr)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }
}

/// Runs any program to its end (a script, a shell): its output goes to files, so that neither
/// stream can fill and stall it while the other is read. Answers its status and output.
public func runToEnd(_ executable: URL, _ arguments: [String], environment: [String: String]) throws
    -> (status: Int32, stdout: String, stderr: String)
{
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let outURL = folder.appendingPathComponent("stdout"), errURL = folder.appendingPathComponent("stderr")
    FileManager.default.createFile(atPath: outURL.path, contents: nil)
    FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = out
    process.standardError = err
    try process.run()
    process.waitUntilExit()
    try out.close()
    try err.close()
    return (process.terminationStatus, try String(contentsOf: outURL, encoding: .utf8), try String(contentsOf: errURL, encoding: .utf8))
}

/// Drains a pipe on a thread of its own.
// @unchecked: `data` is handed from the reading thread to `wait()` by a semaphore, not guarded by a lock.
final class ReadAll: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)
    init(_ handle: FileHandle) {
        Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }.start()
    }
    func wait() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}

/// A `raxx-sandbox serve` process on 127.0.0.1, port 0.
// @unchecked: holds a Foundation Process (not Sendable), replaced by `restart()`.
public final class SandboxProcess: @unchecked Sendable {
    public let url: String
    private var process: Process
    private let arguments: [String]
    private let database: String

    /// Where its email goes (`--mail-dir`, a folder of its own unless the arguments name one).
    public let mailbox: Mailbox

    public init(arguments: [String] = [], database: String = ":memory:") throws {
        var arguments = arguments
        if let given = arguments.firstIndex(of: "--mail-dir"), given + 1 < arguments.count {
            mailbox = Mailbox(directory: arguments[given + 1])
        } else {
            mailbox = Mailbox(directory: FileManager.default.temporaryDirectory.appendingPathComponent("raxx-mail-\(UUID().uuidString)").path)
            arguments += ["--mail-dir", mailbox.directory]
        }
        self.arguments = arguments
        self.database = database
        (process, url) = try Self.start(port: 0, arguments: arguments, database: database)
    }

    /// `raxx-auth register --email EMAIL` as a person runs it: the code emailed to EMAIL read from
    /// this sandbox's mail once it comes (on `--code-fd 0`), then the PIN (on `--pin-fd 0`).
    public func register(
        _ email: String, pin: String, arguments extra: [String] = [], environment: [String: String],
        timeout: Double = 60
    ) throws -> ToolResult {
        let mailbox = self.mailbox
        let before = mailbox.messages(to: email).count
        return try ToolRunner.run(
            "raxx-auth", ["register", "--email", email, "--code-fd", "0", "--pin-fd", "0"] + extra,
            environment: environment,
            later: { running in
                mailbox.code(for: email, after: before, timeout: timeout, while: running).map { $0 + "\n" + pin + "\n" }
            }, timeout: timeout)
    }

    /// The port it listens on.
    public var port: Int { Int(url.split(separator: ":").last ?? "") ?? 0 }

    /// Starts it again at the same address (after `stop`): the same origin, back online.
    public func restart() throws {
        stop()
        var lastError: (any Error)?
        for _ in 0..<20 {  // the port may take a moment to be free again
            do {
                let (started, startedURL) = try Self.start(port: port, arguments: arguments, database: database)
                guard startedURL == url else { throw SandboxError.didNotStart("came back at \(startedURL), not \(url)") }
                process = started
                return
            } catch {
                lastError = error
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        throw lastError ?? SandboxError.didNotStart("no restart")
    }

    private static func start(port: Int, arguments: [String], database: String) throws -> (Process, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltTools.path("raxx-sandbox"))
        process.arguments = ["serve", "--port", "\(port)", "--db", database] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first stdout line is "listening on http://127.0.0.1:PORT".
        let text = firstLine(of: out)
        guard text.hasPrefix("listening on ") else {
            process.terminate()
            process.waitUntilExit()
            throw SandboxError.didNotStart(text)
        }
        return (process, String(text.dropFirst("listening on ".count)))
    }

    public enum SandboxError: Error { case didNotStart(String) }

    /// Sends SIGTERM and waits; answers the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGCONT)  // a suspended server cannot take its SIGTERM
            process.terminate()
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    public var isRunning: Bool { process.isRunning }

    /// Kills the server without warning (SIGKILL), as a crash: no handler runs, nothing is flushed.
    public func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the server without closing its socket (SIGSTOP): connections are accepted by the
    /// kernel and never answered, as a server that hangs.
    public func suspend() { kill(process.processIdentifier, SIGSTOP) }

    /// Lets a suspended server go on (SIGCONT).
    public func resume() { kill(process.processIdentifier, SIGCONT) }

    deinit {
        stop()
        if mailbox.directory.contains("/raxx-mail-") { try? FileManager.default.removeItem(atPath: mailbox.directory) }
    }
}

/// The first line a child process writes to `pipe` (without its newline; empty when it ends first).
func firstLine(of pipe: Pipe) -> String {
    var line = Data()
    let handle = pipe.fileHandleForReading
    while !line.contains(UInt8(ascii: "\n")) {
        let chunk = handle.availableData
        if chunk.isEmpty { break }
        line.append(chunk)
    }
    return String(decoding: line, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
}

import Foundation

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

    public static func path(_ tool: String) -> String { directory.appendingPathComponent(tool).path }
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
func childEnvironment(_ extra: [String: String]) -> [String: String] {
    ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "LANG": "C.UTF-8"].merging(extra) { _, new in new }
}

/// Runs built executables the way a shell would, with a controlled environment.
public enum ToolRunner {
    /// Runs `tool` with `arguments`; stdin gets `input` (or nothing). Kills it after `timeout` seconds.
    public static func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:],
                           input: String? = nil, timeout: Double = 60) throws -> ToolResult {
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
        if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try? inPipe.fileHandleForWriting.close()
        // Read both pipes while the process runs, so a chatty tool cannot block on a full pipe.
        let outData = ReadAll(out.fileHandleForReading), errData = ReadAll(err.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning { process.terminate(); process.waitUntilExit() }
        process.waitUntilExit()
        return ToolResult(status: process.terminationStatus, stdout: outData.wait(), stderr: errData.wait(),
                          seconds: Date().timeIntervalSince(started))
    }
}

extension ToolRunner {
    /// Starts `tool` in the background (output discarded), for tests that stop it midway.
    public static func start(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltTools.path(tool))
        process.arguments = arguments
        process.environment = childEnvironment(environment)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }
}

/// Drains a pipe on a thread of its own.
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
public final class SandboxProcess: @unchecked Sendable {
    public let url: String
    private let process: Process

    public init(arguments: [String] = [], database: String = ":memory:") throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltTools.path("raxx-sandbox"))
        process.arguments = ["serve", "--port", "0", "--db", database] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first stdout line is "listening on http://127.0.0.1:PORT".
        var line = Data()
        let handle = out.fileHandleForReading
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard text.hasPrefix("listening on ") else {
            process.terminate()
            throw SandboxError.didNotStart(text)
        }
        url = String(text.dropFirst("listening on ".count))
    }

    public enum SandboxError: Error { case didNotStart(String) }

    /// Sends SIGTERM and waits; answers the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    public var isRunning: Bool { process.isRunning }

    deinit { stop() }
}

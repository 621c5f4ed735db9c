import Foundation

/// A `raxx-sandbox apns` process on 127.0.0.1, port 0, in a folder of its own: the CA it trusts
/// is `caFile`, its log `logFile` (one JSON line per request decided), its stderr `stderrFile`.
// @unchecked: holds a Foundation Process, which is not Sendable.
public final class APNsEndpointProcess: @unchecked Sendable {
    /// `https://127.0.0.1:PORT`.
    public let url: String
    public let directory: URL
    public var caFile: String { directory.appendingPathComponent("tls/ca.pem").path }
    public var logFile: String { directory.appendingPathComponent("log.jsonl").path }
    public var stderrFile: String { directory.appendingPathComponent("stderr.txt").path }
    private let process: Process

    /// Starts the endpoint with one provider key (its public key as PEM) and `arguments` besides
    /// (`--topic`, `--fail-rate`, `--goaway-after`, …).
    public init(keyID: String, teamID: String, publicKeyPEM: String, arguments: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-apns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keyFile = directory.appendingPathComponent("key.pub.pem").path
        try Data(publicKeyPEM.utf8).write(to: URL(fileURLWithPath: keyFile))
        FileManager.default.createFile(atPath: directory.appendingPathComponent("stderr.txt").path, contents: nil)

        process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltTools.path("raxx-sandbox"))
        process.arguments =
            [
                "apns", "--port", "0", "--tls-dir", directory.appendingPathComponent("tls").path,
                "--key-id", keyID, "--team-id", teamID, "--public-key", keyFile,
                "--log", directory.appendingPathComponent("log.jsonl").path,
            ] + arguments
        process.environment = childEnvironment([:])
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: directory.appendingPathComponent("stderr.txt"))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The first stdout line is "listening on https://127.0.0.1:PORT" (ca.pem is written by then).
        let text = firstLine(of: out)
        guard text.hasPrefix("listening on https://") else {
            process.terminate()
            process.waitUntilExit()
            let stderr = (try? String(contentsOf: directory.appendingPathComponent("stderr.txt"), encoding: .utf8)) ?? ""
            throw SandboxProcess.SandboxError.didNotStart(text + stderr)
        }
        url = String(text.dropFirst("listening on ".count))
    }

    /// The port it listens on.
    public var port: Int { Int(url.split(separator: ":").last ?? "") ?? 0 }

    /// Sends SIGTERM and waits (the log is flushed by then); answers the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    /// The log's lines so far (written at least every 0.2 s, all of them after `stop`).
    public func logLines() -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: logFile, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The accepted pushes in the log.
    public func accepted() -> [[String: Any]] { logLines().filter { $0["event"] as? String == "accepted" } }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

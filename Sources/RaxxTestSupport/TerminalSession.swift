import Foundation

/// A command run on a pseudo-terminal (script(1)) and typed at as a person would: each answer is
/// typed only once the prompt it answers is on the screen (`waitFor`), never after a fixed sleep.
/// What the screen shows is everything the command wrote to the terminal, and everything the
/// terminal echoed of what was typed.
// @unchecked: `screen` and `ended` are guarded by `condition`.
public final class TerminalSession: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let condition = NSCondition()
    private var screen = Data()
    private var ended = false

    public enum Failure: Error, CustomStringConvertible {
        case notShown(String, screen: String)
        public var description: String {
            switch self {
            case .notShown(let text, let screen): "\"\(text)\" never appeared; the screen:\n\(screen)"
            }
        }
    }

    /// Starts `command` (a shell command line) on a terminal `columns` wide.
    public init(_ command: String, environment: [String: String], columns: Int = 200) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", "stty cols \(columns); \(command)", "/dev/null"]
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reading = output.fileHandleForReading
        Thread { [self] in
            while true {
                let data = reading.availableData
                condition.lock()
                if data.isEmpty { ended = true } else { screen.append(data) }
                condition.broadcast()
                condition.unlock()
                if data.isEmpty { return }
            }
        }.start()
    }

    /// What the terminal has shown so far.
    public var shown: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: screen, as: UTF8.self)
    }

    /// Waits until `text` is on the screen after what was `seen` (a count of bytes, from an earlier
    /// wait); answers the screen's length then. Throws if the command ends, or `timeout` passes,
    /// without showing it.
    @discardableResult
    public func waitFor(_ text: String, after seen: Int = 0, timeout: TimeInterval = 120) throws -> Int {
        let needle = Data(text.utf8)
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if screen.count > seen, let found = screen[(screen.startIndex + seen)...].range(of: needle) {
                return found.upperBound - screen.startIndex
            }
            if ended || !condition.wait(until: deadline) {
                if let found = screen[(screen.startIndex + min(seen, screen.count))...].range(of: needle) {
                    return found.upperBound - screen.startIndex
                }
                throw Failure.notShown(text, screen: String(decoding: screen, as: UTF8.self))
            }
        }
    }

    /// Types `line` and Enter.
    public func type(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\r").utf8))
    }

    /// Waits for the command to end; answers its exit status and everything the screen showed.
    public func finish() -> (status: Int32, screen: String) {
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
        condition.lock()
        while !ended { condition.wait() }
        condition.unlock()
        return (process.terminationStatus, shown)
    }
}

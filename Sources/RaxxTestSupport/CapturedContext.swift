import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxHTTP

/// A command context whose streams are captured, for testing command logic in-process.
public struct CapturedContext: Sendable {
    public let context: CommandContext
    public let stdout: CapturedSink
    public let stderr: CapturedSink

    public init(tool: String = "raxx-test", format: OutputFormat = .json, stdoutIsTTY: Bool = false,
                requirement: ConnectivityRequirement = .networkRequired,
                environment: [String: String] = ["HOME": NSTemporaryDirectory()],
                clock: @escaping @Sendable () -> Date = { Date() }) throws {
        let out = CapturedSink(), err = CapturedSink()
        let io = CommandIO(stdout: out, stderr: err, stdoutIsTTY: stdoutIsTTY, stderrIsTTY: false, stdinIsTTY: false)
        let configuration = try RaxxConfiguration(environment: environment)
        context = CommandContext(tool: tool, io: io, format: format, configuration: configuration, requirement: requirement,
                                 clock: clock, makeClient: { RaptorClient.make(tool: tool, configuration: configuration, middlewares: $0) })
        stdout = out
        stderr = err
    }
}

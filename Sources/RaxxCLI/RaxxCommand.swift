import ArgumentParser
import Foundation
import RaxxClient
import RaxxCore
import RaxxVault

/// A Raxx subcommand: it declares its connectivity, takes the global options, and keeps its logic
/// in `run(_:)` over an injected context.
public protocol RaxxCommand: AsyncParsableCommand {
    /// Whether the command may touch the network (its default mode, for help and man pages).
    static var connectivity: ConnectivityRequirement { get }
    /// Whether this invocation may touch the network: a verb with an offline mode (`--cached`)
    /// declares it per mode.
    var requirement: ConnectivityRequirement { get }
    /// The tool the command belongs to (for messages and the User-Agent).
    static var tool: String { get }
    var global: GlobalOptions { get }
    func run(_ context: CommandContext) async throws
    /// What the tool adds to the live world beyond the common pieces (its stores).
    static func liveServices(_ configuration: RaxxConfiguration) -> [Provided]
}

extension RaxxCommand {
    public var requirement: ConnectivityRequirement { Self.connectivity }

    public static func liveServices(_ configuration: RaxxConfiguration) -> [Provided] { [] }

    public mutating func run() async throws {
        let command = self
        let status = await LiveRun(tool: Self.tool, requirement: requirement, output: global.request, services: Self.liveServices)
            .status { context in try await command.run(context) }
        if status != .ok { throw ExitCode(status.rawValue) }
    }

    /// Runs the logic in `context`, reports any error through the one reporter, and answers the
    /// exit status. Tests call this with their own context.
    public static func execute(_ command: Self, in context: CommandContext) async -> ExitStatus {
        await LiveRun.execute(in: context) { context in try await command.run(context) }
    }
}

/// A command's run in the live world, apart from the command's parsed value (the offline reads
/// answered without the parser run through this alone).
public struct LiveRun {
    public let tool: String
    public let requirement: ConnectivityRequirement
    public let output: OutputRequest
    public let services: (RaxxConfiguration) -> [Provided]

    public init(
        tool: String, requirement: ConnectivityRequirement, output: OutputRequest,
        services: @escaping (RaxxConfiguration) -> [Provided]
    ) {
        self.tool = tool
        self.requirement = requirement
        self.output = output
        self.services = services
    }

    /// Runs `body` in the live context (the process's streams, environment and world), reports
    /// any error through the one reporter, and answers the exit status.
    public func status(_ body: (CommandContext) async throws -> Void) async -> ExitStatus {
        // Before anything is read: no core dumps, no inspection by other processes.
        Hardening.disableCoreDumps()
        let io = CommandIO.standard()
        let status: ExitStatus
        do {
            let context = try CommandContext.live(tool: tool, requirement: requirement, output: output, io: io, services: services)
            status = await Self.execute(in: context, body)
        } catch {
            // No configuration could be read (that may be the error): RAXX_ERRORS straight from the environment.
            let errorsAsJSON = ProcessInfo.processInfo.environment["RAXX_ERRORS"] == "json"
            status = Reporter(tool: tool, format: output.errorFormat(errorsAsJSON: errorsAsJSON)).report(error, to: io)
        }
        io.flush()
        // The process exits next: libcurl must not be half-loaded on another thread then.
        CurlTransport.settle()
        return status
    }

    /// Runs `body` in `context`, reports any error through the one reporter, and answers the exit
    /// status.
    public static func execute(in context: CommandContext, _ body: (CommandContext) async throws -> Void) async -> ExitStatus {
        do {
            try await body(context)
            context.io.flush()
            try context.io.checkOutput()
            return .ok
        } catch {
            var raxxError = ErrorMapping.raxxError(from: error)
            if raxxError.code == RaxxError.accountClosed.code, !(await context.forgetClosedAccount()) {
                raxxError.hint = "What this device kept of it could not all be removed: raxx-auth logout --forget-device removes the rest."
            }
            return Reporter(tool: context.tool, format: context.errorFormat, quiet: context.quiet).report(raxxError, to: context.io)
        }
    }
}

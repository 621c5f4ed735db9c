import ArgumentParser
import Foundation
import RaxxCore
import RaxxHTTP
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
    static func liveServices(_ configuration: RaxxConfiguration) -> [any Sendable]
}

extension RaxxCommand {
    public var requirement: ConnectivityRequirement { Self.connectivity }

    public static func liveServices(_ configuration: RaxxConfiguration) -> [any Sendable] { [] }

    public mutating func run() async throws {
        // Before anything is read: no core dumps, no inspection by other processes.
        Hardening.disableCoreDumps()
        let io = CommandIO.standard()
        let format = global.resolvedFormat(stdoutIsTTY: io.stdoutIsTTY)
        let status: ExitStatus
        do {
            let context = try CommandContext.live(tool: Self.tool, requirement: requirement, global: global, io: io,
                                                  services: Self.liveServices)
            status = await Self.execute(self, in: context)
        } catch {
            status = Reporter(tool: Self.tool, format: format).report(error, to: io)
        }
        io.flush()
        // The process exits next: libcurl must not be half-loaded on another thread then.
        CurlTransport.settle()
        if status != .ok { throw ExitCode(status.rawValue) }
    }

    /// Runs the logic in `context`, reports any error through the one reporter, and answers the
    /// exit status. Tests call this with their own context.
    public static func execute(_ command: Self, in context: CommandContext) async -> ExitStatus {
        do {
            try await command.run(context)
            context.io.flush()
            try context.io.checkOutput()
            return .ok
        } catch {
            let raxxError = ErrorMapping.raxxError(from: error)
            return Reporter(tool: context.tool, format: context.format).report(raxxError, to: context.io)
        }
    }
}

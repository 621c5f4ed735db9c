import ArgumentParser
import Foundation
import RaxxCore
import RaxxHTTP

/// A Raxx subcommand: it declares its connectivity, takes the global options, and keeps its logic
/// in `run(_:)` over an injected context.
public protocol RaxxCommand: AsyncParsableCommand {
    /// Whether the command may touch the network.
    static var connectivity: ConnectivityRequirement { get }
    /// The tool the command belongs to (for messages and the User-Agent).
    static var tool: String { get }
    var global: GlobalOptions { get }
    func run(_ context: CommandContext) async throws
    /// What the tool adds to the live world beyond the common pieces (its stores).
    static func liveServices(_ configuration: RaxxConfiguration) -> [any Sendable]
}

extension RaxxCommand {
    public static func liveServices(_ configuration: RaxxConfiguration) -> [any Sendable] { [] }

    public mutating func run() async throws {
        let io = CommandIO.standard()
        let format = global.resolvedFormat(stdoutIsTTY: io.stdoutIsTTY)
        let status: ExitStatus
        do {
            let context = try CommandContext.live(tool: Self.tool, requirement: Self.connectivity, global: global, io: io,
                                                  services: Self.liveServices)
            status = await Self.execute(self, in: context)
        } catch {
            status = Reporter(tool: Self.tool, format: format).report(error, to: io)
        }
        io.flush()
        if status != .ok { throw ExitCode(status.rawValue) }
    }

    /// Runs the logic in `context`, reports any error through the one reporter, and answers the
    /// exit status. Tests call this with their own context.
    public static func execute(_ command: Self, in context: CommandContext) async -> ExitStatus {
        do {
            try await command.run(context)
            context.io.flush()
            return .ok
        } catch {
            let raxxError = ErrorMapping.raxxError(from: error)
            return Reporter(tool: context.tool, format: context.format).report(raxxError, to: context.io)
        }
    }
}

import Foundation
import RaxxAPI
import RaxxCore
import RaxxHTTP

/// Everything a command's logic touches: streams, output format, clock, configuration and the
/// Raptor client. `run()` builds the live one; tests build their own.
public final class CommandContext: Sendable {
    public let tool: String
    public let io: CommandIO
    public let format: OutputFormat
    public let configuration: RaxxConfiguration
    public let requirement: ConnectivityRequirement
    public let clock: @Sendable () -> Date
    private let makeClient: @Sendable () -> Client

    public init(tool: String, io: CommandIO, format: OutputFormat, configuration: RaxxConfiguration,
                requirement: ConnectivityRequirement, clock: @escaping @Sendable () -> Date = { Date() },
                makeClient: @escaping @Sendable () -> Client) {
        self.tool = tool
        self.io = io
        self.format = format
        self.configuration = configuration
        self.requirement = requirement
        self.clock = clock
        self.makeClient = makeClient
    }

    /// The live context for `tool`, from the process's streams and environment.
    public static func live(tool: String, requirement: ConnectivityRequirement, global: GlobalOptions,
                            io: CommandIO = .standard(),
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(RaxxError) -> CommandContext {
        let configuration = try RaxxConfiguration(environment: environment)
        return CommandContext(
            tool: tool, io: io, format: global.resolvedFormat(stdoutIsTTY: io.stdoutIsTTY),
            configuration: configuration, requirement: requirement,
            makeClient: { RaptorClient.make(tool: tool, configuration: configuration) }
        )
    }

    /// The Raptor client. Only network-required commands may have one: an offline-capable command
    /// that asks is a programming error, reported as such instead of touching the network.
    public func client() throws(RaxxError) -> Client {
        guard requirement == .networkRequired else {
            throw RaxxError.failure(code: "internal", "An offline-capable command tried to use the network.")
        }
        return makeClient()
    }

    // MARK: Output

    /// Writes records to stdout: JSON Lines, or one text table.
    public func emit<Record: Encodable>(_ records: [Record], columns: [Table.Column], row: (Record) -> [String]) throws(RaxxError) {
        switch format {
        case .json:
            let encoder = JSONLines.encoder()
            for record in records {
                do {
                    io.stdout.write(String(decoding: try encoder.encode(record), as: UTF8.self) + "\n")
                } catch {
                    throw RaxxError.failure(code: "internal", "Could not encode the output: \(error)")
                }
            }
        case .text:
            io.stdout.write(Table(columns: columns, rows: records.map(row)).render())
        }
        io.stdout.flush()
    }

    /// A message for a person, on stderr.
    public func say(_ message: String) {
        io.stderr.write(message + "\n")
        io.stderr.flush()
    }
}

import Foundation
import RaxxAPI
import RaxxCore
import RaxxHTTP
import RaxxSession
import RaxxVault

/// Everything a command's logic touches: streams, output format, clock, configuration and the
/// Raptor client. `run()` builds the live one; tests build their own.
public final class CommandContext: Sendable {
    public let tool: String
    public let io: CommandIO
    public let format: OutputFormat
    public let configuration: RaxxConfiguration
    public let requirement: ConnectivityRequirement
    public let clock: @Sendable () -> Date
    /// Builds a Raptor client with extra middlewares (the bearer token's, say).
    public typealias ClientFactory = @Sendable (_ middlewares: [any ClientMiddleware]) -> Client
    private let makeClient: ClientFactory

    public init(tool: String, io: CommandIO, format: OutputFormat, configuration: RaxxConfiguration,
                requirement: ConnectivityRequirement, clock: @escaping @Sendable () -> Date = { Date() },
                makeClient: @escaping ClientFactory) {
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
            makeClient: { RaptorClient.make(tool: tool, configuration: configuration, middlewares: $0) }
        )
    }

    /// The Raptor client, without a session. Offline-capable commands may not have one: one that
    /// asks is a programming error, reported as such instead of touching the network.
    public func client() throws(RaxxError) -> Client {
        guard requirement != .offlineCapable else {
            throw RaxxError.failure(code: "internal", "An offline-capable command tried to use the network.")
        }
        return makeClient([])
    }

    /// This device's keystore (in the state folder).
    public var keystore: Keystore {
        Keystore(directory: configuration.stateDirectory, machineIDPath: configuration.machineIDPath)
    }

    /// The session's tokens, renewed silently while the session lives.
    public func sessionTokens() throws(RaxxError) -> SessionTokens {
        SessionTokens(keystore: keystore, client: try client(), clock: clock)
    }

    /// The Raptor client that signs every request with the session's access token.
    public func authenticatedClient() throws(RaxxError) -> Client {
        makeClient([BearerTokenMiddleware(tokens: try sessionTokens())])
    }

    /// The passkey ceremonies with this device's keystore.
    public func ceremonies() throws(RaxxError) -> Ceremonies {
        Ceremonies(keystore: keystore, client: try client(), authenticatedClient: try authenticatedClient(), clock: clock)
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

import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore

extension RaxxAuth {
    /// `raxx-auth ping`: does Raptor answer, and how fast.
    public struct Ping: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "ping",
            abstract: "Check that the Raptor server answers.",
            discussion: "Asks the server named by RAXX_API_URL for its health and version. " + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var api_url: String
            var status: String
            var server_version: String
            var server_time: Date
            var latency_ms: Int
        }

        public func run(_ context: CommandContext) async throws {
            let client = try context.api()
            let started = context.world.monotonic()
            let output = try await client.getHealth()
            let elapsed = context.world.monotonic() - started
            switch output {
            case .ok(let ok):
                let health = try ok.body.json
                let millis = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
                let record = Record(
                    api_url: context.configuration.endpoint.description, status: health.status.rawValue,
                    server_version: health.version, server_time: health.time, latency_ms: millis)
                try context.emit([record], columns: [.init("Server"), .init("Status"), .init("Version"), .init("Latency", .right)]) {
                    [$0.api_url, $0.status, $0.server_version, "\($0.latency_ms) ms"]
                }
            case .default(_, let problem):
                throw try problem.raxxError
            }
        }
    }
}

import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxStore

extension RaxxCache {
    /// `raxx-cache verify`: compare the cache with the server's summary.
    public struct Verify: RaxxCacheVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check the cache against the server's counts and checksums.",
            discussion: """
                Exits 0 when every entity's count and checksum match the server's, and 1 with a report of \
                the drift otherwise. History the retention policy evicted is left out on both sides. 
                """ + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        /// A checksum as a table shows it: its first 12 characters, enough to see a difference.
        static func short(_ checksum: String) -> String {
            checksum.isEmpty ? "-" : checksum.count > 12 ? String(checksum.prefix(12)) + "…" : checksum
        }

        struct Record: Encodable {
            var entity: String
            var local_rows: Int64
            var server_rows: Int64
            var local_checksum: String
            var server_checksum: String
            var match: Bool
        }

        public func run(_ context: CommandContext) async throws {
            let cache = try context.cacheReading()
            let remote = try await context.signedInAPI().getSyncSummary(query: .init(since: cache.state.evictedBefore)).checked().ok.body.json
            // The server answered: reads stop saying there is no connection (the data's age stays).
            try? cache.store.recordOnline(at: context.clock())
            // A checksum over every row: on the cache's thread, not the runtime's.
            let local = try await CacheStore.thread.run { try cache.store.summary(since: cache.state.evictedBefore) }
            let server: [(String, Components.Schemas.EntitySummary)] = [("positions", remote.positions), ("fills", remote.fills), ("orders", remote.orders)]
            let records = server.map { entity, s in
                let l = local[entity] ?? .init(count: 0, checksum: "")
                return Record(
                    entity: entity, local_rows: l.count, server_rows: s.count, local_checksum: l.checksum,
                    server_checksum: s.checksum, match: l.count == s.count && l.checksum == s.checksum)
            }
            // The comparison itself: rows and checksums (their first 12 hex digits) side by side.
            try context.emit(
                records,
                columns: [
                    .init("Entity"), .init("Local rows", .right), .init("Server rows", .right),
                    .init("Local checksum"), .init("Server checksum"), .init("Match"),
                ]
            ) {
                [
                    $0.entity, "\($0.local_rows)", "\($0.server_rows)", Self.short($0.local_checksum), Self.short($0.server_checksum),
                    $0.match ? "yes" : "NO",
                ]
            }
            let drifted = records.filter { !$0.match }.map(\.entity)
            guard drifted.isEmpty else {
                let behind = cache.state.cursor < remote.cursor
                throw RaxxError(
                    code: .drift, message: "The cache differs from the server: \(drifted.joined(separator: ", ")).",
                    hint: behind
                        ? "The server has changes the cache has not pulled yet: run raxx-cache refresh, then verify."
                        : "Rebuild it: raxx-cache refresh --full")
            }
        }
    }
}

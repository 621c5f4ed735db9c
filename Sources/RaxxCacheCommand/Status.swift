import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore
import RaxxStore
import RaxxWire

extension RaxxCache {
    /// `raxx-cache status`: what the cache holds and how its refreshes went.
    public struct Status: RaxxCacheVerb {
        public static let connectivity = ConnectivityRequirement.offlineCapable
        public static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show what the cache holds and how its last refresh went.",
            discussion: """
                One record per entity: rows, last successful refresh, cursor, the last error (kind, time, \
                message), the connectivity last observed, and the cache file and its size. 
                """ + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable, JSONLineWritable {
            var entity: String
            var rows: Int
            var last_success_at: Date?
            var cursor: Int64
            var rebuilding: Bool
            var last_error_kind: String?
            var last_error_at: Date?
            var last_error_message: String?
            var connectivity: String
            var connectivity_at: Date?
            var evicted_before: Date?
            var cache: String
            var size_bytes: Int64
            /// The limits in force (halved while the disk is low on space).
            var retention: String
            var size_cap_bytes: Int64
            var low_disk_space: Bool

            func write(to json: inout JSONLineWriter) {
                json.add("cache", cache)
                json.add("connectivity", connectivity)
                json.add("connectivity_at", connectivity_at)
                json.add("cursor", cursor)
                json.add("entity", entity)
                json.add("evicted_before", evicted_before)
                json.add("last_error_at", last_error_at)
                json.add("last_error_kind", last_error_kind)
                json.add("last_error_message", last_error_message)
                json.add("last_success_at", last_success_at)
                json.add("low_disk_space", low_disk_space)
                json.add("rebuilding", rebuilding)
                json.add("retention", retention)
                json.add("rows", rows)
                json.add("size_bytes", size_bytes)
                json.add("size_cap_bytes", size_cap_bytes)
            }
        }

        public func run(_ context: CommandContext) async throws {
            try await Self.report(context)
        }

        /// The logic, which needs none of the parsed options (the output format is the context's).
        static func report(_ context: CommandContext) async throws {
            let stores = try context.stores
            guard let store = try stores.existingCache() else { throw CacheReading.neverFilled }
            let path = stores.cacheLocation
            let state = try store.syncState()
            // A first fill under way writes the live tables, but reads show none of it until it ends.
            let counts = state.rebuilding == .live ? CacheStore.liveTables.map { _ in 0 } : try store.counts(of: CacheStore.liveTables)
            let size = store.fileSize
            let limits = StorageLimits(
                retention: context.configuration.cacheRetention, sizeCap: context.configuration.cacheSizeCap,
                freeBytes: stores.freeBytes())
            let records = zip(CacheStore.liveTables, counts).map { entity, rows in
                Record(
                    entity: entity, rows: rows, last_success_at: state.lastSuccessAt, cursor: state.cursor,
                    rebuilding: state.rebuilding != .none, last_error_kind: state.lastErrorKind, last_error_at: state.lastErrorAt,
                    last_error_message: state.lastErrorMessage, connectivity: state.connectivity.rawValue,
                    connectivity_at: state.connectivityAt, evicted_before: state.evictedBefore, cache: path, size_bytes: size,
                    retention: limits.retention.description, size_cap_bytes: limits.sizeCap, low_disk_space: limits.halved)
            }
            try context.emit(records, columns: [.init("Entity"), .init("Rows", .right), .init("Last refresh"), .init("Cursor", .right), .init("Last error")]) {
                r in
                let error = r.last_error_kind.map { "\($0) at \(r.last_error_at.map(context.peopleTime) ?? "?")" } ?? "-"
                return [r.entity, "\(r.rows)", r.last_success_at.map(context.peopleTime) ?? "never", "\(r.cursor)", error]
            }
            if context.format == .text {
                context.say(
                    "Connectivity last observed: \(state.connectivity.rawValue)\(state.connectivityAt.map { " at " + context.peopleMoment($0) } ?? ""). "
                        + "Cache: \(path) (\(size >> 10) KiB). Limits: \(limits.retention) of history, \(limits.sizeCap >> 20) MiB"
                        + (limits.halved ? " (halved: the disk is low on space)." : "."))
                switch state.rebuilding {
                case .none: break
                case .live:
                    context.say("A first fill is under way or was interrupted (the next refresh carries on): reads show no data until it ends.")
                case .shadow:
                    context.say(
                        "A full rebuild is under way or was interrupted (the next refresh carries on): reads show the copy of "
                            + "\(state.lastSuccessAt.map(context.peopleMoment) ?? "the last refresh") until it ends.")
                }
            }
            if state.lastSuccessAt == nil { throw CacheReading.neverFilled }
        }
    }
}

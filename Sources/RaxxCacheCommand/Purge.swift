import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore
import RaxxStore

extension RaxxCache {
    /// `raxx-cache purge`: drop old history, or everything.
    public struct Purge: RaxxCacheVerb {
        public static let connectivity = ConnectivityRequirement.offlineCapable
        public static let configuration = CommandConfiguration(
            commandName: "purge",
            abstract: "Remove old history from the cache, or empty it.",
            discussion: """
                --older-than D removes fills, and orders that can no longer change, older than D; --all \
                empties the cache (the next refresh is a full one). Every refresh applies the same policy \
                with RAXX_CACHE_RETENTION (default 365d), and warns when the cache outgrows \
                RAXX_CACHE_MAX_SIZE (MiB, default 1024). 
                """ + connectivity.helpLine
        )

        @Option(name: .customLong("older-than"), help: ArgumentHelp("Remove history older than this (e.g. 90d).", valueName: "duration"))
        var olderThan: RaxxDuration?

        @Flag(help: "Empty the cache.")
        var all = false

        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func validate() throws {
            guard (olderThan != nil) != all else { throw ValidationError("Give exactly one of --older-than D and --all.") }
        }

        struct Record: Encodable {
            var removed: Int?
            var emptied: Bool
            var cache: String
        }

        public func run(_ context: CommandContext) async throws {
            let stores = try context.stores
            guard let store = try stores.existingCache() else {
                try context.emit([Record(removed: 0, emptied: all, cache: stores.cacheLocation)], columns: [.init("Removed", .right)]) { _ in ["0"] }
                return
            }
            // Not while a refresh writes.
            let lock = try await stores.lock(.refresh, wait: .seconds(60))
            defer { lock.release() }
            var record = Record(removed: nil, emptied: all, cache: stores.cacheLocation)
            if all {
                try store.purgeAll()
            } else if let olderThan {
                record.removed = try store.evict(before: context.clock().addingTimeInterval(-olderThan.seconds))
            }
            try context.emit([record], columns: [.init("Removed", .right), .init("Emptied")]) {
                [$0.removed.map(String.init) ?? "all", $0.emptied ? "yes" : "no"]
            }
        }
    }
}

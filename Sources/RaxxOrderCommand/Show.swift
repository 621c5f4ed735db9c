import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxStore

extension RaxxOrder {
    /// `raxx-order show ID`.
    public struct Show: RaxxOrderVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one order.",
            discussion: "Asks the server; with --cached reads raxx-cache's copy instead, offline. " + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The order's id.", valueName: "id"))
        var id: String
        @Flag(help: "Read the cache (offline) instead of asking the server.")
        var cached = false
        @OptionGroup public var global: GlobalOptions

        public init() {}

        /// With --cached it reads the cache only: offline-capable, as every cache read is.
        public var requirement: ConnectivityRequirement { cached ? .offlineCapable : Self.connectivity }

        public func run(_ context: CommandContext) async throws {
            if cached {
                let cache = try context.cacheReading()
                context.disclose(cache)
                var found: CachedOrder? = nil
                try cache.store.orders(CacheQuery()) { if $0.id == id { found = $0 } }
                guard let found else { throw RaxxError(code: .notFound, message: "No order \(id) in the cache.") }
                let record = CachedRecord(found, asOf: cache.asOf)
                guard context.format == .text else { return try context.emit([record], columns: orderColumns) { $0.row(time: context.peopleMoment) } }
                return context.writeRecord(Self.fields(record.row(time: context.peopleMoment)))
            }
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            let order = try await api.getOrder(path: .init(orderId: id)).checked().ok.body.json
            guard context.format == .text else { return try context.emit([order], columns: orderColumns, row: { orderRow($0, time: context.peopleMoment) }) }
            context.writeRecord(Self.fields(orderRow(order, time: context.peopleMoment)))
        }

        /// An order's table row as FIELD/VALUE lines, named as the list's columns are.
        static func fields(_ row: [String]) -> [(field: String, value: String)] {
            zip(orderColumns, row).map { ($0.title, $1) }
        }
    }
}

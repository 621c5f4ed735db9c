import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxStore

extension RaxxOrder {
    /// `raxx-order list`: orders from the server, or from the cache offline.
    public struct List: RaxxOrderVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List orders, newest first.",
            discussion: """
            Asks the server; with --cached reads raxx-cache's copy instead, offline, saying how old it is. 
            """ + connectivity.helpLine + " With --cached: offline-capable."
        )

        @Option(help: ArgumentHelp("Only orders in this status.", valueName: "status"))
        var status: OrderStatus?
        @Option(parsing: .unconditional, help: ArgumentHelp("At most this many orders (default 100).", valueName: "n"))
        var limit = 100
        @Flag(help: "Read the cache (offline) instead of asking the server.")
        var cached = false
        @OptionGroup public var global: GlobalOptions

        public init() {}

        /// With --cached it reads the cache only: offline-capable, as every cache read is.
        public var requirement: ConnectivityRequirement { cached ? .offlineCapable : Self.connectivity }

        public func validate() throws {
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 10000.") }
        }

        public func run(_ context: CommandContext) async throws {
            if cached {
                let cache = try context.cacheReading()
                context.disclose(cache)
                var orders: [CachedOrder] = []
                try cache.store.orders(CacheQuery(status: status, limit: limit)) { orders.append($0) }
                try context.emit(orders.map { CachedRecord($0, asOf: cache.asOf) }, columns: orderColumns) { $0.row }
                return
            }
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            var orders: [Components.Schemas.Order] = []
            var before: String? = nil
            repeat {
                let page = try await api.listOrders(query: .init(status: status, limit: min(limit - orders.count, 1000), before: before))
                    .checked().ok.body.json
                orders += page.orders
                before = page.nextBefore
            } while before != nil && orders.count < limit
            try context.emit(orders, columns: orderColumns, row: orderRow)
        }
    }
}

/// A cached order as JSON (the spec's field names, with as_of) and as a table row.
struct CachedRecord: Encodable {
    var id: String, client_order_id: String, symbol: String, side: String, qty: Int64, type: String, limit_price: String?
    var tif: String, status: String, filled_qty: Int64, avg_fill_price: String?, reject_code: String?, mode: String
    var created_at: Date, updated_at: Date, as_of: Date

    init(_ o: CachedOrder, asOf: Date) {
        id = o.id; client_order_id = o.clientOrderID; symbol = o.symbol; side = o.side; qty = o.qty; type = o.type
        limit_price = o.limitPrice; tif = o.tif; status = o.status; filled_qty = o.filledQty; avg_fill_price = o.avgFillPrice
        reject_code = o.rejectCode; mode = o.mode; created_at = o.createdAt; updated_at = o.updatedAt; as_of = asOf
    }

    var row: [String] {
        [id, symbol, side, "\(qty)", type, limit_price.map(PeopleText.money) ?? "-", status, "\(filled_qty)",
         avg_fill_price.map(PeopleText.money) ?? "-", client_order_id]
    }
}

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
        var limit: Int?
        @Flag(help: "Every order, page after page to the end (JSON Lines as each page comes).")
        var all = false
        @Flag(help: "Read the cache (offline) instead of asking the server.")
        var cached = false
        @OptionGroup public var global: GlobalOptions

        public init() {}

        /// With --cached it reads the cache only: offline-capable, as every cache read is.
        public var requirement: ConnectivityRequirement { cached ? .offlineCapable : Self.connectivity }

        public func validate() throws {
            if let limit, !(1...10_000).contains(limit) { throw ValidationError("--limit must be between 1 and 10000.") }
            if all && limit != nil { throw ValidationError("--all and --limit do not go together: --all is every order.") }
        }

        /// The default number of orders shown.
        static let defaultLimit = 100

        public func run(_ context: CommandContext) async throws {
            let limit = all ? nil : self.limit ?? Self.defaultLimit
            if cached {
                let cache = try context.cacheReading()
                context.disclose(cache)
                var orders: [CachedOrder] = []
                // One more than shown: whether there are more to say so.
                try cache.store.orders(CacheQuery(status: status, limit: limit.map { $0 + 1 })) { orders.append($0) }
                let more = limit.map { orders.count > $0 } ?? false
                try context.emit(orders.prefix(limit ?? orders.count).map { CachedRecord($0, asOf: cache.asOf) }, columns: orderColumns) {
                    $0.row(time: context.peopleTime)
                }
                if more, let limit { sayMore(context, shown: limit) }
                return
            }
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            // With --all and JSON, each page goes out as it comes: memory stays one page.
            let streaming = limit == nil && context.format == .json
            var orders: [Components.Schemas.Order] = []
            var count = 0
            var before: String? = nil
            repeat {
                let want = limit.map { min($0 - count, 1000) } ?? 1000
                let page = try await api.listOrders(query: .init(status: status, limit: want, before: before)).checked().ok.body.json
                count += page.orders.count
                if streaming {
                    try context.emit(page.orders, columns: orderColumns, row: { orderRow($0, time: context.peopleTime) })
                } else {
                    orders += page.orders
                }
                before = page.nextBefore
            } while before != nil && limit.map({ count < $0 }) ?? true
            if !streaming { try context.emit(orders, columns: orderColumns, row: { orderRow($0, time: context.peopleTime) }) }
            if before != nil, let limit { sayMore(context, shown: limit) }
        }

        /// The list stopped at its limit with more orders left: said on stderr, not left to guess.
        func sayMore(_ context: CommandContext, shown: Int) {
            context.say("raxx-order: Showing the newest \(shown) orders; there are more: --all lists every one, or --limit up to 10000.")
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

    func row(time: (Date) -> String) -> [String] {
        [
            id, time(updated_at), PeopleText.instrument(symbol), side, "\(qty)", type, limit_price.map { PeopleText.price($0, of: symbol) } ?? "-", status,
            "\(filled_qty)",
            avg_fill_price.map { PeopleText.price($0, of: symbol) } ?? "-", client_order_id,
        ]
    }
}

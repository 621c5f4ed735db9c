import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore
import RaxxDomain
import RaxxStore
import RaxxWire

extension RaxxCache {
    /// `raxx-cache show`: read the cache, offline.
    public struct Show: RaxxCacheVerb {
        public static let connectivity = ConnectivityRequirement.offlineCapable
        public static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show cached portfolio, positions, fills or orders.",
            discussion: """
                Reads the local cache only and answers at once, online or not. Every JSON record carries \
                as_of, when its data was last brought up to date. After a failed refresh stderr says \
                "No connection — data last updated at TIME"; data older than the freshness window (10m, \
                RAXX_CACHE_FRESHNESS) says its age. With --max-age, older data is printed and the exit \
                status is 3, so scripts can fail closed; so is an empty cache. 
                """ + connectivity.helpLine
        )

        enum What: String, CaseIterable, ExpressibleByArgument {
            case portfolio, positions, fills, orders

            // Spelled out: the argument parser's defaults build these through a key path at start-up.
            static var allValueStrings: [String] { allCases.map { $0.rawValue } }
            static var allValueDescriptions: [String: String] { [:] }
        }

        @Argument(help: ArgumentHelp("What to show: portfolio, positions, fills or orders.", valueName: "what"))
        var what: What

        @Option(help: ArgumentHelp("Only this symbol (positions, fills, orders).", valueName: "symbol"))
        var symbol: String?

        @Option(
            help: ArgumentHelp(
                """
                Only since this time: RFC 3339, a date (2026-11-21: from its midnight here), or a duration back from now such as 2h (fills, \
                orders, positions).
                """,
                valueName: "time"))
        var since: String?

        @Option(help: ArgumentHelp("Only orders in this status (pending, open, partially_filled, filled, cancelled, rejected, expired).", valueName: "status"))
        var status: OrderStatus?

        @Option(parsing: .unconditional, help: ArgumentHelp("At most this many records.", valueName: "n"))
        var limit: Int?

        @Option(name: .customLong("max-age"), help: ArgumentHelp("Exit 3 when the data is older than this (e.g. 90s, 15m, 2h).", valueName: "duration"))
        var maxAge: RaxxDuration?

        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func validate() throws {
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1.") }
            if status != nil, what != .orders { throw ValidationError("--status applies to orders only.") }
            if what == .portfolio && (symbol != nil || since != nil || limit != nil) {
                throw ValidationError("--symbol, --since and --limit do not apply to the portfolio.")
            }
        }

        /// What a `show` reads, apart from the parser's property wrappers: the direct path
        /// (`raxx-cache show WHAT`) makes it without building them.
        struct Reading: Equatable {
            var what: What
            var symbol: String? = nil
            var since: String? = nil
            var status: OrderStatus? = nil
            var limit: Int? = nil
            var maxAge: RaxxDuration? = nil
        }

        var reading: Reading { Reading(what: what, symbol: symbol, since: since, status: status, limit: limit, maxAge: maxAge) }

        public func run(_ context: CommandContext) async throws {
            try await Self.read(reading, context)
        }

        static func read(_ r: Reading, _ context: CommandContext) async throws {
            // A mistaken --since is a usage error whatever the cache holds (an empty one included).
            let query = CacheQuery(
                symbol: r.symbol, since: try SinceArgument.parse(r.since, now: context.clock(), timeZone: context.configuration.timeZone),
                status: r.status, limit: r.limit)
            let cache = try context.cacheReading()
            context.disclose(cache)
            switch context.format {
            case .json:
                let out = context.io.stdout
                switch r.what {
                case .portfolio:
                    if let p = try cache.store.portfolio() { out.write(Self.json(p)) }
                case .positions: try cache.store.exportJSONLines(.positions, query, asOf: cache.asOf) { out.write(bytes: $0) }
                case .fills: try cache.store.exportJSONLines(.fills, query, asOf: cache.asOf) { out.write(bytes: $0) }
                case .orders: try cache.store.exportJSONLines(.orders, query, asOf: cache.asOf) { out.write(bytes: $0) }
                }
                out.flush()
            case .text:
                context.writeTable(try table(r.what, cache.store, query, time: context.peopleTime))
                context.io.stdout.flush()
            }
            try cache.enforce(maxAge: r.maxAge, now: context.clock())
        }

        /// The table for people: times by `time` (local, compact), money grouped with two decimals,
        /// prices at their instrument's tick.
        static func table(_ what: What, _ store: CacheStore, _ query: CacheQuery, time: (Date) -> String) throws -> Table {
            let money = { (text: String) in PeopleText.money(text) }
            switch what {
            case .portfolio:
                var t = Table(columns: [
                    .init("Equity", .right), .init("Cash", .right), .init("Market value", .right),
                    .init("Unrealized P&L", .right), .init("Positions", .right), .init("As of"),
                ])
                if let p = try store.portfolio() {
                    t.rows.append([
                        money(p.equity), money(p.cash), money(p.marketValue),
                        p.unrealized.map { PeopleText.pnl(ticks: $0.unrealizedTicks, percent: $0.percent) } ?? money(p.unrealizedPnl),
                        "\(p.positionsCount)", time(p.asOf),
                    ])
                }
                return t
            case .positions:
                // Narrow, the symbol, the quantity and the P&L stay longest.
                var t = Table(columns: [
                    .init("Symbol", importance: 0), .init("Qty", .right, importance: -1), .init("Avg price", .right, importance: -5),
                    .init("Last", .right, importance: -4), .init("Market value", .right, importance: -3),
                    .init("Unrealized P&L", .right, importance: -2), .init("Updated", importance: -6),
                ])
                try store.positions(query) { p in
                    let value = p.valuation
                    t.rows.append([
                        PeopleText.instrument(p.symbol), "\(p.qty)", PeopleText.price(p.avgPrice, of: p.symbol),
                        p.lastPrice.map { PeopleText.price($0, of: p.symbol) } ?? "-",
                        value.map { PeopleText.money(Money.cents(ticks: $0.marketValueTicks)) } ?? "-",
                        value.map { PeopleText.pnl(ticks: $0.unrealizedTicks, percent: $0.percent) } ?? "-", time(p.updatedAt),
                    ])
                }
                return t
            case .fills:
                var t = Table(columns: [.init("Filled"), .init("Symbol"), .init("Side"), .init("Qty", .right), .init("Price", .right), .init("Order")])
                try store.fills(query) {
                    t.rows.append([
                        time($0.filledAt), PeopleText.instrument($0.symbol), $0.side, "\($0.qty)", PeopleText.price($0.price, of: $0.symbol), $0.orderID,
                    ])
                }
                return t
            case .orders:
                var t = Table(columns: [
                    .init("Updated"), .init("Symbol"), .init("Side"), .init("Qty", .right), .init("Type"),
                    .init("Limit", .right), .init("Status"), .init("Filled", .right), .init("Client order ID"),
                ])
                try store.orders(query) { o in
                    t.rows.append([
                        time(o.updatedAt), PeopleText.instrument(o.symbol), o.side, "\(o.qty)", o.type,
                        o.limitPrice.map { PeopleText.price($0, of: o.symbol) } ?? "-",
                        o.status, "\(o.filledQty)", o.clientOrderID,
                    ])
                }
                return t
            }
        }

        // JSON Lines, field names as in the spec, keys sorted.

        static func json(_ p: CachedPortfolio) -> String {
            var w = JSONLineWriter()
            w.add("account_id", p.accountID); w.add("as_of", p.asOf); w.add("buying_power", Money.cents(p.buyingPower)); w.add("cash", Money.cents(p.cash))
            w.add("equity", Money.cents(p.equity)); w.add("market_value", Money.cents(p.marketValue)); w.add("mode", p.mode)
            w.add("positions_count", p.positionsCount); w.add("unrealized_pnl", Money.cents(p.unrealizedPnl))
            w.add("unrealized_pnl_percent", p.unrealized?.percent, decimals: 2)
            return w.line()
        }
    }
}

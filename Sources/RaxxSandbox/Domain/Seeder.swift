import Foundation
import RaxxDomain

/// Loads a large, realistic trading history into one account: positions across equities and
/// listed options, the orders and fills that built them, and a change-log entry for each row, so
/// that a sync sees exactly what was written. Seeded history moves cash as the paper engine would.
public struct Seeder: Sendable {
    public struct Summary: Sendable, Codable, Equatable {
        public var email: String
        public var account_id: String
        public var created_account: Bool
        public var positions: Int
        public var orders: Int
        public var fills: Int
        /// Cash credited before the history so that it never overdraws the account.
        public var deposit: String
        /// The account's cash once seeded.
        public var cash: String
    }

    public let database: SandboxDatabase
    public let market: Market

    public init(database: SandboxDatabase, market: Market) {
        self.database = database
        self.market = market
    }

    /// The symbols a seed of `count` positions uses: the equities first, then option contracts.
    func universe(count: Int, at now: Date) -> [Market.Instrument] {
        var instruments = market.underlyings.map { Market.Instrument.equity($0) }
        var chains = market.underlyings.map { market.optionChain($0, from: now).makeIterator() }
        var exhausted = false
        while instruments.count < count, !exhausted {
            exhausted = true
            for i in chains.indices {
                guard instruments.count < count, let next = chains[i].next() else { continue }
                instruments.append(.option(next))
                exhausted = false
            }
        }
        return Array(instruments.prefix(count))
    }

    public enum SeedError: Error, CustomStringConvertible {
        case tooManyPositions(asked: Int, available: Int)
        case badCounts
        case noSuchAccount(String)
        public var description: String {
            switch self {
            case .tooManyPositions(let asked, let available):
                "The simulated market lists \(available) instruments; cannot seed \(asked) positions."
            case .badCounts:
                "Counts must not be negative, fills need at least one position, and deletes are part of the changes."
            case .noSuchAccount(let email):
                "There is no account for \(email): seed it first."
            }
        }
    }

    /// Seeds `email`'s account (created when missing) with `fills` fills spread over `positions`
    /// instruments, each history in time order over the last 90 days and every fill applied by the
    /// paper engine's own arithmetic (`PaperEngine.cashChange`, `.position`, `.orderAverage`): cash
    /// moves with every fill, sells never exceed what is held, every position ends long with a
    /// positive average price and a quantity equal to its fills. Where the history would take cash
    /// below zero at some instant, or end with less than the account had, the account is first
    /// credited a deposit of just what avoids both (audited with the seed), so that no fill would
    /// have been refused and the account can trade on. The history is
    /// deterministic under the market seed, the email, `now` and what the database already holds.
    /// A position is built by its fills: with fewer fills than positions, only the instruments
    /// that got a fill are held (the summary counts them). `progress` hears rows written
    /// (positions and fills) out of the total, now and then.
    public func seed(email: String, positions: Int, fills: Int, now: Date = Date(),
                     progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }) throws -> Summary {
        guard positions >= 0, fills >= 0, fills == 0 || positions > 0 else { throw SeedError.badCounts }
        let instruments = universe(count: positions, at: now)
        guard instruments.count == positions else {
            throw SeedError.tooManyPositions(asked: positions, available: instruments.count)
        }
        var rng = SplitMix(seed: market.seed ^ Market.hash(0, email))
        let history: TimeInterval = 90 * 86400
        let start = now.timeIntervalSince1970 - history
        let store = GRDBSeedRepository(writer: database.writer)
        let account = try store.account(email: email, now: now, actor: "sandbox.seed")
        let total = positions + fills
        let step = max(total / 1000, 1)

        let (orderCount, deposit, cash, made) = try store.seed(account: account.accountID) { batch -> (Int, Int64, Int64, Int) in
            let (startingCash, held) = try batch.holdings()
            // IDs come from a generator of their own, salted with what the database holds, so that
            // seeding the same account again makes new ones.
            let salt = try batch.lastSeq()
            var ids = SplitMix(seed: market.seed ^ Market.hash(UInt64(bitPattern: salt), email) ^ 0x1D5)
            // Each fill's instant and cash change, for the deposit the history needs.
            var flows: [(at: Double, cash: Int64)] = []
            flows.reserveCapacity(fills)
            var orderCount = 0, done = 0, fillsLeft = fills, positionsMade = 0
            for (index, instrument) in instruments.enumerated() {
                let share = fillsLeft / (instruments.count - index)
                fillsLeft -= share
                let existing = held[instrument.symbol]
                var qty = existing?.qty ?? 0, average = existing?.averagePrice ?? 0
                let lot: UInt64 = instrument.multiplier == 1 ? 20 : 3
                // What the trader means to end up holding; above it, trims are likelier.
                let target = Int64(rng.next() % lot) + 1
                try batch.setSymbol(instrument.symbol)
                var made = 0, last = start
                var legs: [(id: SeedID, qty: Int64, price: Int64, at: Double)] = []
                while made < share {
                    let count = min(Int(rng.next() % 3) + 1, share - made)
                    // Orders follow each other in time; each leg 1.5 s after the one before.
                    let opened = max(start + history * (Double(made) + Double(rng.next() % 1000) / 1000) / Double(share), last + 1)
                    // A paper account sells only what it holds: a sell leaves at least one unit per leg to come.
                    let canSell = qty >= Int64(count) + 1
                    let buy = !(canSell && rng.next() % 100 < (qty > target ? 60 : 30))
                    let orderID = SeedID(prefix: "ord", ids.next(), UInt32(truncatingIfNeeded: ids.next()))
                    var filled: Int64 = 0, orderAverage: Int64? = nil, limit: Int64 = buy ? 0 : Int64.max
                    legs.removeAll(keepingCapacity: true)
                    for leg in 0..<count {
                        let at = opened + Double(leg) * 1.5
                        let price = market.priceTicks(instrument, at: Date(timeIntervalSince1970: at)) ?? Money.ticksPerUnit
                        var legQty = Int64(rng.next() % lot) + 1
                        if !buy { legQty = min(legQty, qty - Int64(count - leg)) }
                        (qty, average) = PaperEngine.position(held: qty, average: average, buy: buy, qty: legQty, price: price)
                        orderAverage = PaperEngine.orderAverage(orderAverage, filled: filled, qty: legQty, price: price)
                        filled += legQty
                        // A limit the order's every fill was marketable at.
                        limit = buy ? max(limit, price) : min(limit, price)
                        flows.append((at, PaperEngine.cashChange(buy: buy, qty: legQty, price: price, multiplier: instrument.multiplier)))
                        legs.append((SeedID(prefix: "fil", ids.next(), UInt32(truncatingIfNeeded: ids.next())), legQty, price, at))
                        last = at
                    }
                    try batch.order(id: orderID, buy: buy, qty: filled, limit: rng.next() % 2 == 0 ? nil : limit,
                                    averagePrice: orderAverage ?? 0, openedAt: opened, lastFillAt: last)
                    for leg in legs {
                        try batch.fill(id: leg.id, orderID: orderID, buy: buy, qty: leg.qty, price: leg.price, at: leg.at)
                    }
                    made += count
                    orderCount += 1
                }
                if share > 0 {
                    let newID = SeedID(prefix: "pos", ids.next(), UInt32(truncatingIfNeeded: ids.next())).string
                    try batch.position(existing: existing?.id, newID: newID, symbol: instrument.symbol, qty: qty, averagePrice: average, now: now)
                    positionsMade += 1
                }
                let before = done
                done += share + 1
                if done / step != before / step || done == total { progress(done, total) }
            }
            // Cash through the history, in time order (at one instant, payments first): the deposit
            // covers its deepest shortfall, and leaves the account at least the cash it had, so that
            // it can go on trading as before.
            flows.sort { $0.at != $1.at ? $0.at < $1.at : $0.cash < $1.cash }
            var cash = startingCash, lowest = startingCash
            for flow in flows {
                cash += flow.cash
                lowest = min(lowest, cash)
            }
            let deposit = max(-lowest, startingCash - cash, 0)
            try batch.setCash(cash + deposit)
            try batch.audit(AuditEntry(at: now, actor: "sandbox.seed", action: "sandbox.seeded", subject: account.userID,
                                       details: ["positions": "\(positions)", "fills": "\(fills)", "orders": "\(orderCount)",
                                                 "deposit": Money.string(ticks: deposit)]))
            return (orderCount, deposit, cash + deposit, positionsMade)
        }
        if total == 0 { progress(0, 0) }
        return Summary(email: email, account_id: account.accountID, created_account: account.created,
                       positions: made, orders: orderCount, fills: fills, deposit: Money.string(ticks: deposit), cash: Money.string(ticks: cash))
    }
}

/// A small, fast, seedable generator (SplitMix64), so seeds are reproducible.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        return Market.mix(state &- 0x9e37_79b9_7f4a_7c15)
    }
}

extension Seeder {
    public struct ChurnSummary: Sendable, Codable, Equatable {
        public var email: String
        public var updated: Int
        public var deleted: Int
    }

    /// Changes an account's existing history the way a trading day does: `changes - deletes`
    /// positions move (quantity and average price), `deletes` positions are closed and removed
    /// (tombstones in the change log). Deterministic under the market seed and `round`.
    public func churn(email: String, changes: Int, deletes: Int, round: UInt64 = 0, now: Date = Date()) throws -> ChurnSummary {
        guard changes >= 0, deletes >= 0, deletes <= changes else { throw SeedError.badCounts }
        var rng = SplitMix(seed: market.seed ^ Market.hash(round, email) ^ 0x5EED)
        _ = try GRDBSeedRepository(writer: database.writer).churn(email: email, now: now) { ids in
            guard changes <= ids.count else { throw SeedError.tooManyPositions(asked: changes, available: ids.count) }
            var pool = ids
            var chosen: [String] = []
            for _ in 0..<changes {
                let i = Int(rng.next() % UInt64(pool.count))
                chosen.append(pool.remove(at: i))
            }
            return chosen.enumerated().map { n, id in
                n < deletes ? .delete(id) : .move(id, qty: Int64(rng.next() % 5) + 1, averagePrice: Int64(rng.next() % 100) * 100)
            }
        }
        return ChurnSummary(email: email, updated: changes - deletes, deleted: deletes)
    }
}

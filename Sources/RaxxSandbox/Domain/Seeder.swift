import Foundation
import RaxxDomain

/// Loads a large, realistic trading history into one account: positions across equities and
/// listed options, the orders and fills that built them, and a change-log entry for each row, so
/// that a sync sees exactly what was written. Seeded history does not move cash.
public struct Seeder: Sendable {
    public struct Summary: Sendable, Codable, Equatable {
        public var email: String
        public var account_id: String
        public var created_account: Bool
        public var positions: Int
        public var orders: Int
        public var fills: Int
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

    /// Seeds `email`'s account (created when missing). `progress` hears the fraction done.
    public func seed(email: String, positions: Int, fills: Int, now: Date = Date(),
                     progress: @Sendable (Double) -> Void = { _ in }) throws -> Summary {
        guard positions >= 0, fills >= 0, fills == 0 || positions > 0 else { throw SeedError.badCounts }
        let instruments = universe(count: positions, at: now)
        guard instruments.count == positions else {
            throw SeedError.tooManyPositions(asked: positions, available: instruments.count)
        }
        var rng = SplitMix(seed: market.seed ^ Market.hash(0, email))
        let history: TimeInterval = 90 * 86400
        var orderCount = 0

        let store = GRDBSeedRepository(writer: database.writer)
        let account = try store.account(email: email, now: now, actor: "sandbox.seed")
        // One transaction per slice of positions keeps memory and the WAL bounded.
        let slice = 500
        var start = 0
        var fillsLeft = fills
        while start < instruments.count || (start == 0 && instruments.isEmpty) {
            let end = min(start + slice, instruments.count)
            try store.writeSlice { batch in
                for index in start..<end {
                    let instrument = instruments[index]
                    // Spread the fills evenly over the positions.
                    let share = fillsLeft / (instruments.count - index)
                    fillsLeft -= share
                    var netQty: Int64 = 0
                    var cost: Int64 = 0
                    var made = 0
                    while made < share {
                        let legs = min(Int(rng.next() % 3) + 1, share - made)
                        let opened = now.addingTimeInterval(-history * Double(rng.next() % 10_000) / 10_000)
                        // Traders add and trim: nearly half the orders sell while the position is long, so
                        // positions stay of a size a 100,000 paper account could plausibly hold.
                        let side = (netQty > 0 && rng.next() % 100 < 47) ? "sell" : "buy"
                        let orderID = Identifier.make("ord")
                        var orderQty: Int64 = 0
                        var orderValue: Int64 = 0
                        var legFills: [(String, Int64, Int64, Date)] = []
                        for leg in 0..<legs {
                            let at = opened.addingTimeInterval(Double(leg) * 1.5)
                            let price = market.priceTicks(instrument, at: at) ?? Money.ticksPerUnit
                            var qty = Int64(rng.next() % (instrument.multiplier == 1 ? 20 : 3)) + 1
                            if side == "sell" { qty = min(qty, max(netQty - orderQty, 1)) }
                            orderQty += qty
                            orderValue += qty * price
                            legFills.append((Identifier.make("fil"), qty, price, at))
                        }
                        let avg = orderValue / max(orderQty, 1)
                        let type = rng.next() % 2 == 0 ? "market" : "limit"
                        let last = (legFills.last?.3 ?? opened).timeIntervalSince1970
                        try batch.order(id: orderID, account: account.accountID, symbol: instrument.symbol, side: side, qty: orderQty,
                                        type: type, averagePrice: avg, openedAt: opened.timeIntervalSince1970, lastFillAt: last)
                        for (fillID, qty, price, at) in legFills {
                            try batch.fill(id: fillID, account: account.accountID, orderID: orderID, symbol: instrument.symbol, side: side,
                                           qty: qty, price: price, at: at.timeIntervalSince1970)
                        }
                        if side == "buy" {
                            cost += orderValue
                            netQty += orderQty
                        } else {
                            cost -= avg * orderQty
                            netQty -= orderQty
                        }
                        made += legs
                        orderCount += 1
                    }
                    if netQty == 0 { // a position with no history still holds something
                        netQty = Int64(rng.next() % 10) + 1
                        cost = netQty * (market.priceTicks(instrument, at: now) ?? Money.ticksPerUnit)
                    }
                    try batch.position(id: Identifier.make("pos"), account: account.accountID, symbol: instrument.symbol, qty: netQty,
                                       averagePrice: cost / max(netQty, 1), now: now)
                }
                if end == instruments.count {
                    try batch.audit(AuditEntry(at: now, actor: "sandbox.seed", action: "sandbox.seeded", subject: account.userID,
                                               details: ["positions": "\(positions)", "fills": "\(fills)", "orders": "\(orderCount)"]))
                }
            }
            progress(instruments.isEmpty ? 1 : Double(end) / Double(instruments.count))
            if instruments.isEmpty { break }
            start = end
        }
        return Summary(email: email, account_id: account.accountID, created_account: account.created,
                       positions: positions, orders: orderCount, fills: fills)
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

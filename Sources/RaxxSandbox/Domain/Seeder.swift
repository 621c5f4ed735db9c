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
    public func seed(
        email: String, positions: Int, fills: Int, now: Date = Date(),
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws -> Summary {
        guard positions >= 0, fills >= 0, fills == 0 || positions > 0 else { throw SeedError.badCounts }
        let instruments = universe(count: positions, at: now)
        guard instruments.count == positions else {
            throw SeedError.tooManyPositions(asked: positions, available: instruments.count)
        }
        var rng = SplitMix(seed: market.seed ^ Market.hash(0, email))
        let history90: TimeInterval = 90 * 86400
        let start = now.timeIntervalSince1970 - history90
        let store = SeedStore(writer: database.writer)
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
            // Every instrument's history is made an order at a time, and the histories are written
            // merged in time order, as a trading account writes them: IDs, times and the change
            // log then all grow together, and an account's rows sit side by side in every index.
            var histories: [InstrumentHistory] = []
            var upcoming = TimeOrder()
            var fillsLeft = fills, done = 0
            for (index, instrument) in instruments.enumerated() {
                let share = fillsLeft / (instruments.count - index)
                fillsLeft -= share
                let existing = held[instrument.symbol]
                let lot: UInt64 = instrument.multiplier == 1 ? 20 : 3
                // What the trader means to end up holding; above it, trims are likelier.
                let target = Int64(rng.next() % lot) + 1
                var history = InstrumentHistory(
                    instrument: instrument, share: share, existingID: existing?.id, lot: lot, target: target,
                    qty: existing?.qty ?? 0, average: existing?.averagePrice ?? 0, last: start,
                    rng: SplitMix(seed: rng.next()))
                if let opened = history.makeNext(start: start, span: history90, market: market, flows: &flows) {
                    upcoming.push(opened, index)
                } else {
                    done += 1  // no fills: nothing held
                    if done / step != (done - 1) / step || done == total { progress(done, total) }
                }
                histories.append(history)
            }
            var orderCount = 0, positionsMade = 0, symbol = ""
            while let index = upcoming.pop() {
                guard let order = histories[index].next else { continue }
                let instrument = histories[index].instrument
                if instrument.symbol != symbol {
                    try batch.setSymbol(instrument.symbol)
                    symbol = instrument.symbol
                }
                let orderID = SeedID(prefix: "ord", at: order.opened, random: ids.next())
                try batch.order(
                    id: orderID, buy: order.buy, qty: order.filled, limit: order.limit, averagePrice: order.average,
                    openedAt: order.opened, lastFillAt: order.lastFillAt)
                for leg in order.legs {
                    try batch.fill(
                        id: SeedID(prefix: "fil", at: leg.at, random: ids.next()), orderID: orderID, buy: order.buy,
                        qty: leg.qty, price: leg.price, at: leg.at)
                }
                orderCount += 1
                let before = done
                done += order.legs.count
                if let opened = histories[index].makeNext(start: start, span: history90, market: market, flows: &flows) {
                    upcoming.push(opened, index)
                } else {
                    let h = histories[index]
                    let newID = SeedID(prefix: "pos", at: now.timeIntervalSince1970, random: ids.next()).string
                    try batch.position(existing: h.existingID, newID: newID, symbol: instrument.symbol, qty: h.qty, averagePrice: h.average, now: now)
                    positionsMade += 1
                    done += 1
                }
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
            try batch.audit(
                AuditEntry(
                    at: now, actor: "sandbox.seed", action: .sandboxSeeded, subject: account.userID,
                    details: [
                        "positions": "\(positions)", "fills": "\(fills)", "orders": "\(orderCount)",
                        "deposit": Money.string(ticks: deposit),
                    ]))
            return (orderCount, deposit, cash + deposit, positionsMade)
        }
        if total == 0 { progress(0, 0) }
        return Summary(
            email: email, account_id: account.accountID, created_account: account.created,
            positions: made, orders: orderCount, fills: fills, deposit: Money.string(ticks: deposit), cash: Money.string(ticks: cash))
    }
}

/// One instrument's seeded history, made an order at a time (`makeNext`), so that the histories of
/// every instrument can be written merged in time order.
struct InstrumentHistory {
    struct Order {
        var opened: Double
        var buy: Bool
        var filled: Int64
        var limit: Int64?
        var average: Int64
        var lastFillAt: Double
        var legs: [(qty: Int64, price: Int64, at: Double)]
    }

    let instrument: Market.Instrument
    /// How many fills it gets.
    let share: Int
    let existingID: String?
    let lot: UInt64
    let target: Int64
    /// The position as the history so far leaves it.
    var qty: Int64
    var average: Int64
    var made = 0
    var last: Double
    var rng: SplitMix
    /// The order to write next (nil once the history is complete).
    var next: Order?

    init(
        instrument: Market.Instrument, share: Int, existingID: String?, lot: UInt64, target: Int64, qty: Int64, average: Int64,
        last: Double, rng: SplitMix
    ) {
        self.instrument = instrument
        self.share = share
        self.existingID = existingID
        self.lot = lot
        self.target = target
        self.qty = qty
        self.average = average
        self.last = last
        self.rng = rng
    }

    /// Makes the history's next order (its fills applied by the paper engine's arithmetic, their
    /// cash flows appended to `flows`) and answers when it opens; nil when the history is complete.
    mutating func makeNext(start: Double, span: TimeInterval, market: Market, flows: inout [(at: Double, cash: Int64)]) -> Double? {
        guard made < share else {
            next = nil
            return nil
        }
        let count = min(Int(rng.next() % 3) + 1, share - made)
        // Orders follow each other in time; each leg 1.5 s after the one before.
        let opened = max(start + span * (Double(made) + Double(rng.next() % 1000) / 1000) / Double(share), last + 1)
        // A paper account sells only what it holds: a sell leaves at least one unit per leg to come.
        let canSell = qty >= Int64(count) + 1
        let buy = !(canSell && rng.next() % 100 < (qty > target ? 60 : 30))
        var filled: Int64 = 0, orderAverage: Int64? = nil, limit: Int64 = buy ? 0 : Int64.max
        var legs: [(qty: Int64, price: Int64, at: Double)] = []
        legs.reserveCapacity(count)
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
            legs.append((legQty, price, at))
            last = at
        }
        made += count
        next = Order(
            opened: opened, buy: buy, filled: filled, limit: rng.next() % 2 == 0 ? nil : limit, average: orderAverage ?? 0,
            lastFillAt: last, legs: legs)
        return opened
    }
}

/// The instruments whose next orders are waiting, earliest first (a binary min-heap of
/// (time, instrument index); ties go to the lower index, so the merge is deterministic).
struct TimeOrder {
    private var heap: [(at: Double, index: Int)] = []

    private static func before(_ a: (at: Double, index: Int), _ b: (at: Double, index: Int)) -> Bool {
        a.at != b.at ? a.at < b.at : a.index < b.index
    }

    mutating func push(_ at: Double, _ index: Int) {
        heap.append((at, index))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The index of the earliest, taken off.
    mutating func pop() -> Int? {
        guard let top = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var first = parent
                if left < heap.count, Self.before(heap[left], heap[first]) { first = left }
                if right < heap.count, Self.before(heap[right], heap[first]) { first = right }
                guard first != parent else { break }
                heap.swapAt(parent, first)
                parent = first
            }
        }
        return top.index
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
        _ = try SeedStore(writer: database.writer).churn(email: email, now: now) { ids in
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

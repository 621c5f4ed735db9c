import Foundation
import RaxxDomain

/// A deterministic simulated market: the same seed and the same instant always give the same
/// price. Equities follow a smooth seeded path; options on them are priced with Black-Scholes.
public struct Market: Sendable {
    public struct Underlying: Sendable, Hashable {
        public var symbol: String
        public var basePrice: Double
        public var volatility: Double
    }

    public enum Instrument: Sendable, Hashable {
        case equity(Underlying)
        case option(OptionContract)

        public var symbol: String {
            switch self {
            case .equity(let u): u.symbol
            case .option(let o): o.symbol
            }
        }

        /// Shares per contract: 100 for options, 1 for equities.
        public var multiplier: Int64 {
            if case .option = self { return 100 }
            return 1
        }
    }

    public let seed: UInt64
    public let underlyings: [Underlying]
    private let bySymbol: [String: Underlying]

    public static let defaultUnderlyings: [Underlying] = [
        .init(symbol: "AAPL", basePrice: 190, volatility: 0.25),
        .init(symbol: "MSFT", basePrice: 420, volatility: 0.22),
        .init(symbol: "SPY", basePrice: 560, volatility: 0.15),
        .init(symbol: "QQQ", basePrice: 480, volatility: 0.18),
        .init(symbol: "NVDA", basePrice: 130, volatility: 0.45),
        .init(symbol: "TSLA", basePrice: 250, volatility: 0.55),
        .init(symbol: "AMZN", basePrice: 185, volatility: 0.30),
        .init(symbol: "GOOGL", basePrice: 170, volatility: 0.28),
        .init(symbol: "META", basePrice: 520, volatility: 0.35),
        .init(symbol: "IWM", basePrice: 220, volatility: 0.20),
    ]

    public init(seed: UInt64 = 42, underlyings: [Underlying] = Market.defaultUnderlyings) {
        self.seed = seed
        self.underlyings = underlyings
        self.bySymbol = Dictionary(uniqueKeysWithValues: underlyings.map { ($0.symbol, $0) })
    }

    // MARK: Instruments

    /// The instrument a symbol names, or nil when the market has no such thing: an unknown ticker,
    /// a malformed OCC symbol, or a contract it does not list (see `lists`).
    public func instrument(_ symbol: String) -> Instrument? {
        if let u = bySymbol[symbol.uppercased()] { return .equity(u) }
        guard let contract = OptionContract(occ: symbol), lists(contract) else { return nil }
        return .option(contract)
    }

    /// Whether the market lists `contract`: an option on one of its underlyings that expires on a
    /// month's third Friday, at a strike on the underlying's grid (a whole number of steps, the
    /// step set by its base price) within half its base price either way. The rule does not
    /// move with the price, so a contract once listed stays listed (and expires).
    public func lists(_ contract: OptionContract) -> Bool {
        guard let u = bySymbol[contract.underlying], Self.isThirdFriday(contract.expiry) else { return false }
        let step = Int64((Self.strikeStep(for: u.basePrice) * 1000).rounded())
        let strike = contract.strikeThousandths
        let base = Int64((u.basePrice * 1000).rounded())
        return strike % step == 0 && strike * 2 >= base && strike * 2 <= base * 3
    }

    /// Whether `day` is the third Friday of its month (a day the calendar lacks is not).
    static func isThirdFriday(_ day: CalendarDay) -> Bool {
        guard (15...21).contains(day.day), day.exists else { return false }
        let date = day.start
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.component(.weekday, from: date) == 6
    }

    /// Listed contracts on `underlying` at `date`: monthly expiries (third Fridays) and strikes
    /// on its grid around the spot, calls and puts.
    public func optionChain(_ underlying: Underlying, from date: Date, expiries: Int = 13, strikesEachSide: Int = 20) -> [OptionContract] {
        let spot = Double(equityPriceTicks(underlying, at: date)) / Double(Money.ticksPerUnit)
        let step = Self.strikeStep(for: underlying.basePrice)
        let center = (spot / step).rounded() * step
        var contracts: [OptionContract] = []
        for expiry in Self.monthlyExpiries(after: date, count: expiries) {
            for k in -strikesEachSide...strikesEachSide {
                let strike = center + Double(k) * step
                for right in [OptionContract.Right.call, .put] {
                    let contract = OptionContract(
                        underlying: underlying.symbol, expiry: expiry, right: right,
                        strikeThousandths: Int64((strike * 1000).rounded()))
                    if lists(contract) { contracts.append(contract) }
                }
            }
        }
        return contracts
    }

    static func strikeStep(for spot: Double) -> Double {
        switch spot {
        case ..<25: 0.5
        case ..<100: 1
        case ..<250: 2.5
        case ..<500: 5
        default: 10
        }
    }

    /// The third Friday of each of the next `count` months (UTC days).
    static func monthlyExpiries(after date: Date, count: Int) -> [CalendarDay] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        var (year, month) = (c.year!, c.month!)
        var result: [CalendarDay] = []
        while result.count < count {
            // The first Friday is day 1 + (Friday(6) - weekday of the 1st) mod 7; the third is 14 days later.
            let first = calendar.date(from: DateComponents(year: year, month: month, day: 1))!
            let weekday = calendar.component(.weekday, from: first)
            let day = 1 + (6 - weekday + 7) % 7 + 14
            let expiry = CalendarDay(year: year, month: month, day: day)
            if expiry.start > date { result.append(expiry) }
            month += 1
            if month > 12 { month = 1; year += 1 }
        }
        return result
    }

    // MARK: Prices

    /// The price of `instrument` at `date`, in ticks, rounded to cents; nil once an option has expired.
    public func priceTicks(_ instrument: Instrument, at date: Date) -> Int64? {
        switch instrument {
        case .equity(let u):
            return equityPriceTicks(u, at: date)
        case .option(let o):
            guard let u = bySymbol[o.underlying] else { return nil }
            return optionPriceTicks(o, underlying: u, spotTicks: equityPriceTicks(u, at: date), at: date)
        }
    }

    /// Prices at one instant, with each underlying's spot computed once (a portfolio of thousands
    /// of contracts on a handful of underlyings).
    public func snapshot(at date: Date) -> Snapshot { Snapshot(market: self, date: date) }

    public struct Snapshot {
        let market: Market
        let date: Date
        private var spots: [String: Int64] = [:]

        init(market: Market, date: Date) {
            self.market = market
            self.date = date
            for u in market.underlyings { spots[u.symbol] = market.equityPriceTicks(u, at: date) }
        }

        public func priceTicks(_ instrument: Instrument) -> Int64? {
            switch instrument {
            case .equity(let u): return spots[u.symbol]
            case .option(let o):
                guard let u = market.bySymbol[o.underlying], let spot = spots[o.underlying] else { return nil }
                return market.optionPriceTicks(o, underlying: u, spotTicks: spot, at: date)
            }
        }
    }

    func optionPriceTicks(_ o: OptionContract, underlying u: Underlying, spotTicks: Int64, at date: Date) -> Int64? {
        // A day the calendar lacks (31 February) never trades.
        guard o.expiry.exists else { return nil }
        let expiry = o.expiry.start
        let years = (expiry.addingTimeInterval(20 * 3600).timeIntervalSince(date)) / (365.25 * 86400)
        guard years > 0 else { return nil }
        let spot = Double(spotTicks) / Double(Money.ticksPerUnit)
        let strike = Double(o.strikeThousandths) / 1000
        let value = Self.blackScholes(spot: spot, strike: strike, years: years, rate: 0.04, volatility: u.volatility, call: o.right == .call)
        return max(Money.ticks(roundingToCents: value), Money.ticksPerUnit / 100)
    }

    /// A smooth seeded path: slow and daily cycles plus minute-level noise, around the base price.
    func equityPriceTicks(_ u: Underlying, at date: Date) -> Int64 {
        let minutes = date.timeIntervalSince1970 / 60
        let h = Self.hash(seed, u.symbol)
        let phase1 = Double(h & 0xFFFF) / 65536 * 2 * .pi
        let phase2 = Double((h >> 16) & 0xFFFF) / 65536 * 2 * .pi
        let slow = sin(2 * .pi * minutes / (60 * 24 * 23) + phase1) * u.volatility * 0.35
        let daily = sin(2 * .pi * minutes / (60 * 24) + phase2) * u.volatility * 0.04
        let noise = valueNoise(h, minutes) * u.volatility * 0.01
        return Money.ticks(roundingToCents: u.basePrice * exp(slow + daily + noise))
    }

    /// Deterministic noise in [-1, 1], interpolated between whole minutes.
    private func valueNoise(_ h: UInt64, _ minutes: Double) -> Double {
        let m0 = minutes.rounded(.down)
        let t = minutes - m0
        func at(_ m: Double) -> Double {
            let x = Self.mix(h ^ UInt64(bitPattern: Int64(m)))
            return Double(x >> 11) / Double(1 << 53) * 2 - 1
        }
        return at(m0) * (1 - t) + at(m0 + 1) * t
    }

    static func hash(_ seed: UInt64, _ text: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return mix(h)
    }

    /// SplitMix64's finaliser.
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    static func blackScholes(spot: Double, strike: Double, years: Double, rate: Double, volatility: Double, call: Bool) -> Double {
        let sqrtT = years.squareRoot()
        let d1 = (log(spot / strike) + (rate + volatility * volatility / 2) * years) / (volatility * sqrtT)
        let d2 = d1 - volatility * sqrtT
        func n(_ x: Double) -> Double { 0.5 * erfc(-x / 2.squareRoot()) }
        let discount = exp(-rate * years)
        return call ? spot * n(d1) - strike * discount * n(d2) : strike * discount * n(-d2) - spot * n(-d1)
    }
}

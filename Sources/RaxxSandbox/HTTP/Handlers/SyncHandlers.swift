import Foundation
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire

/// The read models (the spec's `read` tag): the portfolio snapshot, delta sync over the change
/// log, and the checksum summary that lets a copy verify itself.
struct SyncHandlers: Sendable {
    let trading: TradingStore
    let market: Market
    let configuration: SandboxConfiguration
    let clock: @Sendable () -> Date

    // MARK: Portfolio

    func getPortfolio(_ input: Operations.GetPortfolio.Input, caller: Caller) async throws -> Operations.GetPortfolio.Output {
        let now = clock()
        let account = caller.accountID
        let state = try await trading.read { ledger in try ledger.portfolio(account: account) }
        var marketValue: Int64 = 0, unrealized: Int64 = 0
        var marks: [String: Int64] = [:]
        let prices = market.snapshot(at: now)
        for (symbol, qty, average) in state.holdings {
            guard let instrument = market.instrument(symbol) else { continue }
            // An expired option is worth nothing.
            let price = prices.priceTicks(instrument) ?? 0
            marks[instrument.symbol] = price
            guard let value = Valuation(qty: qty, averagePriceTicks: average, priceTicks: price, multiplier: instrument.multiplier) else { continue }
            marketValue += value.marketValueTicks
            unrealized += value.unrealizedTicks
        }
        let cash = state.cash
        return .ok(
            .init(
                body: .json(
                    .init(
                        accountId: caller.accountID, asOf: now, mode: state.mode, cash: Money.cents(ticks: cash),
                        marketValue: Money.cents(ticks: marketValue), equity: Money.cents(ticks: cash + marketValue),
                        buyingPower: Money.cents(ticks: max(cash, 0)), unrealizedPnl: Money.cents(ticks: unrealized),
                        positionsCount: state.holdings.count,
                        marks: marks.sorted { $0.key < $1.key }.map { .init(symbol: $0.key, price: Money.string(ticks: $0.value)) }))))
    }

    // MARK: Delta sync

    func getSyncChanges(_ input: Operations.GetSyncChanges.Input, caller: Caller) async throws -> Operations.GetSyncChanges.Output {
        let cursor = input.query.cursor ?? 0
        guard cursor >= 0 else { throw ProblemError(400, code: .cursorInvalid, title: "The cursor must not be negative.") }
        let limit = min(max(input.query.limit ?? 1000, 1), 10_000)
        let rebuilding = input.query.rebuild ?? false
        let now = clock()
        let retention = configuration.changeRetention.seconds
        let engine = PaperEngine(market: market), account = caller.accountID
        let json = try await trading.write { ledger -> [UInt8] in
            try engine.sweep(ledger, account: account, now: now)
            try ledger.pruneTombstones(before: now.addingTimeInterval(-retention))
            let horizon = try ledger.syncHorizon()
            // A cursor from before the newest pruned tombstone may have missed deletions: start over.
            let reset = !rebuilding && cursor > 0 && cursor < horizon
            return try ledger.changePage(account: account, after: reset ? 0 : cursor, limit: limit, reset: reset, asOf: now)
        }
        // The page goes out as written (PreEncodedBodyMiddleware); a caller without the middleware
        // (tests calling the handler) gets it decoded into the generated types.
        if let box = PreEncodedBody.current {
            box.fill(json)
            return .ok(.init(body: .json(.init(changes: [], cursor: 0, hasMore: false, reset: false, asOf: now))))
        }
        return .ok(.init(body: .json(try SyncPageReader.decode(json))))
    }

    // MARK: Summary

    func getSyncSummary(_ input: Operations.GetSyncSummary.Input, caller: Caller) async throws -> Operations.GetSyncSummary.Output {
        let since = input.query.since?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude
        let now = clock()
        let account = caller.accountID
        let summary = try await trading.read { ledger in try ledger.summary(account: account, since: since) }
        return .ok(
            .init(
                body: .json(
                    .init(
                        cursor: summary.cursor, asOf: now, positions: summary.positions, fills: summary.fills,
                        orders: summary.orders))))
    }
}

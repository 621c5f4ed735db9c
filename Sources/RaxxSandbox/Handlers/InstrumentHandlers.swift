import Foundation
import RaxxAPI
import RaxxDomain

/// Instrument look-up on the simulated market (the spec files it under `orders`).
struct InstrumentHandlers: Sendable {
    let market: Market
    let clock: @Sendable () -> Date

    func getInstruments(_ input: Operations.GetInstruments.Input, caller: Caller) async throws -> Operations.GetInstruments.Output {
        let now = clock()
        var known: [Components.Schemas.Instrument] = []
        var unknown: [String] = []
        for symbol in input.query.symbol {
            guard let instrument = market.instrument(symbol), let price = market.priceTicks(instrument, at: now) else {
                unknown.append(symbol)
                continue
            }
            var underlying: String? = nil
            if case .option(let contract) = instrument { underlying = contract.underlying }
            known.append(.init(symbol: instrument.symbol, kind: underlying == nil ? .equity : .option, underlying: underlying,
                               price: Money.string(ticks: price), multiplier: Int(instrument.multiplier)))
        }
        return .ok(.init(body: .json(.init(instruments: known, unknown: unknown))))
    }
}

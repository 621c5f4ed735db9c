import Foundation
import RaxxAPI
import RaxxDomain

/// Instrument look-up on the simulated market (the spec files it under `orders`).
struct InstrumentHandlers: Sendable {
    let market: Market
    let clock: @Sendable () -> Date

    func getInstruments(_ input: Operations.GetInstruments.Input, caller: Caller) async throws -> Operations.GetInstruments.Output {
        // The spec's limits: `symbol` is required (one or more, at most 1,000), each 1 to 32 characters.
        // The generated server reads an absent exploded array as an empty one, so it is checked here.
        let symbols = input.query.symbol
        guard !symbols.isEmpty else { throw ProblemError.badRequest("Missing query parameter 'symbol': name one or more symbols.") }
        guard symbols.count <= 1000 else { throw ProblemError.badRequest("Query parameter 'symbol' takes at most 1000 symbols.") }
        if let bad = symbols.firstIndex(where: { $0.isEmpty || $0.unicodeScalars.count > 32 }) {
            throw ProblemError.badRequest("Query parameter 'symbol' [\(bad)] must be 1 to 32 characters.")
        }
        let now = clock()
        var known: [Components.Schemas.Instrument] = []
        var unknown: [String] = []
        for symbol in symbols {
            guard let instrument = market.instrument(symbol), let price = market.priceTicks(instrument, at: now) else {
                unknown.append(symbol)
                continue
            }
            var underlying: String? = nil
            if case .option(let contract) = instrument { underlying = contract.underlying }
            known.append(
                .init(
                    symbol: instrument.symbol, kind: underlying == nil ? .equity : .option, underlying: underlying,
                    price: Money.string(ticks: price), multiplier: Int(instrument.multiplier)))
        }
        return .ok(.init(body: .json(.init(instruments: known, unknown: unknown))))
    }
}

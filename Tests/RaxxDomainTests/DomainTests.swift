import Foundation
import RaxxAPI
import RaxxDomain
import Testing

@Suite struct SymbolTests {
    @Test(arguments: ["AAPL", "BRK.B", "spy", "AAPL261218C00190000", "AAPL  261218P00190000", "QQQ270115C00500000"])
    func wellFormedSymbols(symbol: String) { #expect(InstrumentSymbol(parsing: symbol) != nil) }

    @Test(arguments: [
        "", "TOOLONGX", "AA PL", "AAPL261218X00190000", "AAPL261318C00190000", "123", "AAPL26121C00190000",
        "AAPL261218C00000000", "BRK.", "BRK.BB", ".B", "A.B.C", "\u{DF}", "\u{FB00}", "AAPL\u{301}",
    ])
    func malformedSymbols(symbol: String) { #expect(InstrumentSymbol(parsing: symbol) == nil) }

    @Test func oneCanonicalSpelling() throws {
        #expect(InstrumentSymbol(parsing: "brk.b")?.description == "BRK.B")
        let option = try #require(InstrumentSymbol(parsing: "aapl  261218c00190000"))
        #expect(option.description == "AAPL261218C00190000")
        #expect(option.underlying == "AAPL")
        guard case .option(let contract) = option else { Issue.record("not an option"); return }
        #expect(contract.right == .call && contract.strikeThousandths == 190_000)
        #expect(contract.expiry == CalendarDay(year: 2026, month: 12, day: 18))
    }

    /// An option's parts as JSON, keys sorted, the day and the strike written as the wire has them.
    @Test func anOptionsPartsAsJSON() {
        #expect(
            OptionJSON.object("F  270105P00005500")
                == #"{"expiry":"2027-01-05","multiplier":100,"right":"put","strike":"5.50","underlying":"F"}"#)
        #expect(
            OptionJSON.object("aapl261218c01922500")
                == #"{"expiry":"2026-12-18","multiplier":100,"right":"call","strike":"1922.50","underlying":"AAPL"}"#)
        #expect(OptionJSON.object("AAPL") == nil && OptionJSON.object("BRK.B") == nil)
    }

    /// A day is written with its zeros: ISO 8601's YYYY-MM-DD, and OCC's YYMMDD.
    @Test func aDayIsWrittenWithItsZeros() {
        #expect(CalendarDay(year: 2027, month: 1, day: 5).description == "2027-01-05")
        #expect(CalendarDay(year: 2026, month: 12, day: 18).description == "2026-12-18")
        #expect(CalendarDay(year: 2030, month: 3, day: 9).yymmdd == "300309")
        #expect(CalendarDay(parsing: CalendarDay(year: 2028, month: 2, day: 29).description) == CalendarDay(year: 2028, month: 2, day: 29))
    }

    @Test func aDayTheCalendarLacksHasNoDate() {
        #expect(!CalendarDay(year: 2026, month: 2, day: 31).exists && OptionContract(occ: "AAPL260231C00190000") == nil)
        #expect(CalendarDay(year: 2026, month: 2, day: 28).exists && OptionContract(occ: "AAPL260228C00190000") != nil)
    }
}

@Suite struct MoneyTests {
    @Test func fixedPointRoundTrips() {
        #expect(Money.string(ticks: 1_872_500) == "187.25")
        #expect(Money.string(ticks: 500) == "0.05")
        #expect(Money.string(ticks: -123_456) == "-12.3456")
        #expect(Money.string(ticks: 1_000_000_000) == "100000.00")
        #expect(Money.ticks(parsing: "187.25") == 1_872_500)
        #expect(Money.ticks(parsing: "10") == 100_000)
        #expect(Money.ticks(parsing: "-0.5") == -5000)
        #expect(Money.ticks(parsing: "123456789012.9999") == 1_234_567_890_129_999)
        #expect(Money.ticks(parsing: "-0") == 0 && Money.ticks(parsing: "007.1") == 71_000)
        for bad in ["", "1.23456", "abc", "1.", ".5", "1e5", "--1", "1234567890123", "-", "+5", "1.2.3", "1-2", " 1", "1 ", "\u{661}"] {
            #expect(Money.ticks(parsing: bad) == nil)
        }
    }

    @Test func anOrderPriceIsPositiveWithAtMostNineWholeDigits() {
        #expect(Money.priceTicks(parsing: "3.5") == 35_000)
        #expect(Money.priceTicks(parsing: "999999999.9999") != nil)
        for bad in ["0", "0.0000", "-5", "1000000000", "1.23456"] { #expect(Money.priceTicks(parsing: bad) == nil) }
    }
}

@Suite struct OrderTermsTests {
    @Test func workingAndFinalStatusesPartitionTheSpec() {
        #expect(Set(OrderStatus.working) == [.pending, .open, .partiallyFilled])
        #expect(OrderStatus.allCases.filter(\.isFinal) == [.filled, .cancelled, .rejected, .expired])
        #expect(OrderStatus.resting.allSatisfy { OrderStatus.working.contains($0) })
    }

    @Test func theActionHashIsCanonicalJSON() {
        let action = OrderAction(clientOrderID: "c1", symbol: "MSFT", side: .buy, qty: 40, type: .market, limitPrice: nil, tif: .day, mode: .paper)
        // Keys sorted, enums as the spec spells them, no white space.
        #expect(action.hash.count == 43)
        let same = OrderAction(clientOrderID: "c1", symbol: "MSFT", side: .buy, qty: 40, type: .market, limitPrice: nil, tif: .day, mode: .paper)
        #expect(action.hash == same.hash)
        let other = OrderAction(clientOrderID: "c1", symbol: "MSFT", side: .sell, qty: 40, type: .market, limitPrice: nil, tif: .day, mode: .paper)
        #expect(action.hash != other.hash)
    }
}

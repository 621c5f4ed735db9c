import Foundation
import RaxxAPI
import RaxxTestSupport
import RaxxWire
import Testing

/// The wire's table of keys is the generated model's: each list names exactly the keys the
/// generated encoder writes for its type (every optional field present), in sorted order.
@Suite struct WireKeysTests {
    static func keys(of value: some Encodable) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(try EncodingStyle.compactSorted.encode(value))) as? [String: Any]
        return (object?.keys).map { $0.sorted() } ?? []
    }

    static func names(_ keys: [StaticString]) -> [String] { keys.map(\.description) }

    static let at = Date(timeIntervalSince1970: 1_800_000_000)
    static let order = Components.Schemas.Order(
        id: "o", clientOrderId: "c", symbol: "AAPL", side: .buy, qty: 1, _type: .limit, limitPrice: "1.00", tif: .day,
        status: .filled, filledQty: 1, avgFillPrice: "1.00", rejectCode: "r", mode: .paper, notAfter: at, createdAt: at, updatedAt: at)
    static let position = Components.Schemas.Position(id: "p", symbol: "AAPL", qty: 1, avgPrice: "1.00", updatedAt: at)
    static let fill = Components.Schemas.Fill(id: "f", orderId: "o", symbol: "AAPL", side: .sell, qty: 1, price: "1.00", filledAt: at)

    @Test func eachListIsTheGeneratedTypesKeysInOrder() throws {
        let change = Components.Schemas.SyncChange(
            seq: 1, entity: .order, op: .upsert, id: "o", position: Self.position, fill: Self.fill,
            order: Self.order)
        let page = Components.Schemas.SyncPage(changes: [change], cursor: 1, hasMore: false, reset: false, asOf: Self.at, total: 1)
        #expect(try Self.keys(of: page) == Self.names(WireKeys.Page.all))
        #expect(try Self.keys(of: change) == Self.names(WireKeys.Change.all))
        #expect(try Self.keys(of: Self.position) == Self.names(WireKeys.Position.all))
        #expect(try Self.keys(of: Self.fill) == Self.names(WireKeys.Fill.all))
        #expect(try Self.keys(of: Self.order) == Self.names(WireKeys.Order.all))
        let mark = Components.Schemas.Mark(symbol: "AAPL", price: "1.00")
        let portfolio = Components.Schemas.Portfolio(
            accountId: "a", asOf: Self.at, mode: .paper, cash: "1.00", marketValue: "1.00", equity: "2.00", buyingPower: "1.00",
            unrealizedPnl: "0.00", positionsCount: 1, marks: [mark])
        #expect(try Self.keys(of: portfolio) == Self.names(WireKeys.Portfolio.all))
        #expect(try Self.keys(of: mark) == Self.names(WireKeys.Mark.all))
    }

    @Test func theChangeValuesAreTheGeneratedEnums() {
        #expect(Self.names(WireKeys.Values.entities) == Components.Schemas.SyncEntity.allCases.map(\.rawValue))
        #expect(Self.names(WireKeys.Values.ops) == Components.Schemas.SyncChange.OpPayload.allCases.map(\.rawValue))
    }

    @Test func aFragmentIsTheKeyAsJSONWritesIt() {
        #expect(String(decoding: WireKeys.fragment(WireKeys.Order.avgFillPrice, first: true), as: UTF8.self) == #""avg_fill_price":"#)
        #expect(String(decoding: WireKeys.fragment(WireKeys.Page.cursor), as: UTF8.self) == #","cursor":"#)
    }
}

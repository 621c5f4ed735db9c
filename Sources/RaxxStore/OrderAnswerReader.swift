import Foundation
import RaxxAPI
import RaxxCore

/// Reads an order as Raptor answers it (the body of `POST /api/orders`) straight from its bytes,
/// with the sync pages' reader: a batch of orders spent a tenth of its time in JSONDecoder, on the
/// critical path between one order's answer and the next order's request.
///
/// What that reader leaves alone (an escape in a string, a key twice, an unknown enum value, …) is
/// decoded by the generated types instead, which accept or refuse it exactly as the generated
/// client does: so an answer reads the same whichever way it was read.
public enum OrderAnswerReader {
    public static func order(_ bytes: [UInt8]) throws -> Components.Schemas.Order {
        try bytes.withUnsafeBytes { buffer in
            if let order = try? fast(buffer) { return order }
            return try SyncPageReader.generatedDecoder().decode(Components.Schemas.Order.self, from: Data(buffer))
        }
    }

    /// The order, or `SyncPageReader.Unsupported` for anything the reader does not take.
    static func fast(_ buffer: UnsafeRawBufferPointer) throws -> Components.Schemas.Order {
        var r = SyncPageReader.Reader(buffer)
        let o = try SyncPageReader.order(&r)
        guard r.peekByte() == nil else { throw r.unsupported("something after the order") }
        func text(_ range: Range<Int>) -> String { r.string(range) }
        // The enum values were checked against the generated types' own while reading.
        guard let side = Components.Schemas.Side(rawValue: text(o.side)),
              let type = Components.Schemas.OrderType(rawValue: text(o.type)),
              let tif = Components.Schemas.TimeInForce(rawValue: text(o.tif)),
              let status = Components.Schemas.OrderStatus(rawValue: text(o.status)),
              let mode = Components.Schemas.TradingMode(rawValue: text(o.mode)) else {
            throw r.unsupported("an unknown enum value")
        }
        return Components.Schemas.Order(
            id: text(o.id), clientOrderId: text(o.clientOrderID), symbol: text(o.symbol), side: side, qty: o.qty, _type: type,
            limitPrice: o.limitPrice.map(text), tif: tif, status: status, filledQty: o.filledQty, avgFillPrice: o.avgFillPrice.map(text),
            rejectCode: o.rejectCode.map(text), mode: mode, notAfter: o.notAfter,
            createdAt: o.createdAt, updatedAt: o.updatedAt)
    }
}

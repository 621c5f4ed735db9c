import Foundation
import RaxxAPI

extension SyncPageReader {
    /// The page in `bytes` as the fast reader reads it, in the generated types: the values
    /// `CacheStore` writes from the reader's byte ranges, made values. `SyncPageReader.Unsupported`
    /// for anything the reader leaves to the generated decoder. This is what the differential
    /// tests hold to that decoder: a page reads the same whichever way it was read.
    public static func read(_ bytes: UnsafeRawBufferPointer) throws -> Components.Schemas.SyncPage {
        let outline = try outline(of: bytes)
        let r = Reader(bytes)
        var changes: [Components.Schemas.SyncChange] = []
        _ = try Self.changes(in: bytes, of: outline) { c in changes.append(try model(c, r)) }
        let h = outline.header
        return .init(changes: changes, cursor: h.cursor, hasMore: h.hasMore, reset: h.reset, asOf: h.asOf, total: h.total)
    }

    static func model(_ c: Change, _ r: Reader) throws -> Components.Schemas.SyncChange {
        guard let seq = c.seq, let entity = c.entity, let delete = c.delete, let id = c.id else {
            throw r.unsupported("a change field is missing")
        }
        let kind: Components.Schemas.SyncEntity =
            switch entity {
            case .position: .position
            case .fill: .fill
            case .order: .order
            }
        return .init(
            seq: seq, entity: kind, op: delete ? .delete : .upsert, id: r.string(id),
            position: c.position.map { model($0, r) }, fill: try c.fill.map { try model($0, r) },
            order: try c.order.map { try model($0, r) })
    }

    static func model(_ p: Position, _ r: Reader) -> Components.Schemas.Position {
        .init(
            id: r.string(p.id), symbol: r.string(p.symbol), qty: p.qty, avgPrice: r.string(p.avgPrice),
            updatedAt: p.updatedAt)
    }

    static func model(_ f: Fill, _ r: Reader) throws -> Components.Schemas.Fill {
        // The enum values were checked against the generated types' own while reading.
        guard let side = Components.Schemas.Side(rawValue: r.string(f.side)) else { throw r.unsupported("an unknown enum value") }
        return .init(
            id: r.string(f.id), orderId: r.string(f.orderID), symbol: r.string(f.symbol), side: side, qty: f.qty,
            price: r.string(f.price), filledAt: f.filledAt)
    }

    static func model(_ o: Order, _ r: Reader) throws -> Components.Schemas.Order {
        func text(_ range: Range<Int>) -> String { r.string(range) }
        guard let side = Components.Schemas.Side(rawValue: text(o.side)),
            let type = Components.Schemas.OrderType(rawValue: text(o.type)),
            let tif = Components.Schemas.TimeInForce(rawValue: text(o.tif)),
            let status = Components.Schemas.OrderStatus(rawValue: text(o.status)),
            let mode = Components.Schemas.TradingMode(rawValue: text(o.mode))
        else {
            throw r.unsupported("an unknown enum value")
        }
        return Components.Schemas.Order(
            id: text(o.id), clientOrderId: text(o.clientOrderID), symbol: text(o.symbol), side: side, qty: o.qty, _type: type,
            limitPrice: o.limitPrice.map(text), tif: tif, status: status, filledQty: o.filledQty, avgFillPrice: o.avgFillPrice.map(text),
            rejectCode: o.rejectCode.map(text), mode: mode, notAfter: o.notAfter,
            createdAt: o.createdAt, updatedAt: o.updatedAt)
    }
}

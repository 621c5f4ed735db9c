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
    public static func order(_ bytes: [UInt8]) throws -> Components.Schemas.Order { try WireJSON.read(bytes, fast: fast) }

    /// The order, or `SyncPageReader.Unsupported` for anything the reader does not take.
    static func fast(_ buffer: UnsafeRawBufferPointer) throws -> Components.Schemas.Order {
        var r = SyncPageReader.Reader(buffer)
        let o = try SyncPageReader.order(&r)
        guard r.peekByte() == nil else { throw r.unsupported("something after the order") }
        return try SyncPageReader.model(o, r)
    }
}

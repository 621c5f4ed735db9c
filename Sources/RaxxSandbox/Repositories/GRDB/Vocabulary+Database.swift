import GRDB
import RaxxAPI

// The spec's vocabulary is stored as its raw values: a column of one of these reads and writes
// the enum itself, never a string spelt out in a handler.
extension Components.Schemas.Side: DatabaseValueConvertible {}
extension Components.Schemas.OrderType: DatabaseValueConvertible {}
extension Components.Schemas.TimeInForce: DatabaseValueConvertible {}
extension Components.Schemas.OrderStatus: DatabaseValueConvertible {}
extension Components.Schemas.EventType: DatabaseValueConvertible {}

import GRDB
import RaxxAPI
import RaxxCore

// The spec's vocabulary is stored as its raw values: a column of one of these reads and writes
// the enum itself, never a string spelt out in a handler.
//
// A stored value that is not one of the enum's cases (a row from before a case was renamed, or
// one written by hand) is an error naming the table, the column and the value, in the records
// (Records.swift), the alerts feed (EventLog) and the sync page writer (SyncPageJSON) alike: a read
// never makes a value up.

/// An enum of the spec that statements name: `sql` is its value as an SQL string literal, so a
/// statement spells no value of the vocabulary by hand.
protocol SQLVocabulary: RawRepresentable<String> {}

extension SQLVocabulary {
    /// The raw value, quoted for SQL (the spec's values hold no quote).
    var sql: String { "'" + rawValue + "'" }
}

/// An enum of the spec stored as its raw value; a value outside it does not read (GRDB's
/// `fromDatabaseValue` of a raw-representable type is nil for it, and the read throws).
protocol StoredVocabulary: SQLVocabulary, CaseIterable, Sendable, DatabaseValueConvertible {}

extension StoredVocabulary {
    /// `text`, read from `table`.`column`, as a case; an error naming them and the value when it
    /// is none of them (nil: NULL).
    static func stored(_ text: String?, table: String, column: String) throws(UnknownStoredValue) -> Self {
        try UnknownStoredValue.read(text, table: table, column: column)
    }
}

extension Components.Schemas.Side: StoredVocabulary {}
extension Components.Schemas.OrderType: StoredVocabulary {}
extension Components.Schemas.TimeInForce: StoredVocabulary {}
extension Components.Schemas.OrderStatus: StoredVocabulary {}
extension Components.Schemas.TradingMode: StoredVocabulary {}
extension Components.Schemas.SyncEntity: StoredVocabulary {}
extension Components.Schemas.DSRKind: StoredVocabulary {}
extension Components.Schemas.DSRStatus: StoredVocabulary {}
extension Components.Schemas.Device.EnvironmentPayload: StoredVocabulary {}
extension Components.Schemas.EventType: StoredVocabulary {}

extension Components.Schemas.SyncChange.OpPayload: SQLVocabulary {}

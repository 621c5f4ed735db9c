import GRDB
import RaxxAPI

// The spec's vocabulary is stored as its raw values: a column of one of these reads and writes
// the enum itself, never a string spelt out in a handler.
//
// A stored value that is not one of the enum's cases (a row from before a case was renamed, or
// one written by hand) reads as the enum's `storedFallback`, the same in the records
// (Records.swift) and in the sync page writer (SyncPageJSON): a read never fails on one.

/// An enum of the spec that statements name: `sql` is its value as an SQL string literal, so a
/// statement spells no value of the vocabulary by hand.
protocol SQLVocabulary: RawRepresentable<String> {}

extension SQLVocabulary {
    /// The raw value, quoted for SQL (the spec's values hold no quote).
    var sql: String { "'" + rawValue + "'" }
}

/// An enum of the spec stored as its raw value, with the case an unknown value reads as.
protocol StoredVocabulary: SQLVocabulary, CaseIterable, Sendable {
    static var storedFallback: Self { get }
}

extension StoredVocabulary {
    /// `text` as a case, or the fallback.
    static func stored(_ text: String) -> Self { Self(rawValue: text) ?? storedFallback }
}

extension Components.Schemas.Side: StoredVocabulary, DatabaseValueConvertible {
    static var storedFallback: Self { .buy }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? { String.fromDatabaseValue(value).map(stored) }
}

extension Components.Schemas.OrderType: StoredVocabulary, DatabaseValueConvertible {
    static var storedFallback: Self { .market }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? { String.fromDatabaseValue(value).map(stored) }
}

extension Components.Schemas.TimeInForce: StoredVocabulary, DatabaseValueConvertible {
    static var storedFallback: Self { .day }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? { String.fromDatabaseValue(value).map(stored) }
}

extension Components.Schemas.OrderStatus: StoredVocabulary, DatabaseValueConvertible {
    static var storedFallback: Self { .pending }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? { String.fromDatabaseValue(value).map(stored) }
}

extension Components.Schemas.TradingMode: StoredVocabulary, DatabaseValueConvertible {
    static var storedFallback: Self { .paper }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? { String.fromDatabaseValue(value).map(stored) }
}

extension Components.Schemas.SyncEntity: StoredVocabulary, DatabaseValueConvertible {
    static var storedFallback: Self { .position }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? { String.fromDatabaseValue(value).map(stored) }
}

extension Components.Schemas.DSRKind: StoredVocabulary, DatabaseValueConvertible {
    static var storedFallback: Self { .access }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? { String.fromDatabaseValue(value).map(stored) }
}

extension Components.Schemas.DSRStatus: StoredVocabulary, DatabaseValueConvertible {
    /// A request in a state this sandbox does not know is closed, never worked on.
    static var storedFallback: Self { .refused }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? { String.fromDatabaseValue(value).map(stored) }
}

extension Components.Schemas.Device.EnvironmentPayload: StoredVocabulary, DatabaseValueConvertible {
    static var storedFallback: Self { .production }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? { String.fromDatabaseValue(value).map(stored) }
}

extension Components.Schemas.EventType: DatabaseValueConvertible, SQLVocabulary {}
extension Components.Schemas.SyncChange.OpPayload: SQLVocabulary {}

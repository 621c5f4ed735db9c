/// A stored value outside its enum (a row written by a newer build, by hand, or damaged), named
/// where it was found: a read never makes a value up. The client's stores turn it into the
/// `RaxxError` of their file (`RaxxStore`'s `storedCase`); the sandbox's stores throw it as it is.
public struct UnknownStoredValue: Error, Sendable, Equatable, CustomStringConvertible {
    public let table: String
    public let column: String
    /// The value as stored ("NULL" when there was none).
    public let value: String
    /// The enum's values.
    public let values: [String]

    public init<E: RawRepresentable & CaseIterable>(_ type: E.Type, table: String, column: String, value: String) {
        self.table = table
        self.column = column
        self.value = value
        values = E.allCases.map { "\($0.rawValue)" }
    }

    /// `raw`, read from `table`.`column`, as a case of `E`; this error when it is none of them
    /// (nil: NULL).
    public static func read<E: RawRepresentable & CaseIterable>(
        _ raw: E.RawValue?, as type: E.Type = E.self, table: String, column: String
    ) throws(UnknownStoredValue) -> E {
        guard let raw else { throw UnknownStoredValue(E.self, table: table, column: column, value: "NULL") }
        guard let value = E(rawValue: raw) else {
            throw UnknownStoredValue(E.self, table: table, column: column, value: "\(raw)")
        }
        return value
    }

    public var description: String {
        "\(table).\(column) holds '\(value)', which is not one of its values (\(values.joined(separator: ", ")))"
    }
}

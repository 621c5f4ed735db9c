import RaxxCore

/// A stored value outside its enum (a row written by a newer build, by hand, or damaged) is an
/// error naming the table, the column and the value: a read never makes a value up.
///
/// `code` and `hint` say whose file it is and what to do about it (`.journalUnreadable` for the
/// order journal, `.cacheDamaged` for the cache).
func storedCase<Value: RawRepresentable & CaseIterable>(
    _ raw: Value.RawValue, table: String, column: String, code: ErrorCode, hint: String? = nil
) throws -> Value {
    if let value = Value(rawValue: raw) { return value }
    let values = Value.allCases.map { "\($0.rawValue)" }.joined(separator: ", ")
    throw RaxxError(
        code: code, message: "\(table).\(column) holds '\(raw)', which is not one of its values (\(values)).",
        hint: hint)
}

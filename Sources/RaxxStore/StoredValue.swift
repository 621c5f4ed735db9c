import RaxxCore

/// A stored value outside its enum is an error naming the table, the column and the value
/// (`UnknownStoredValue`): a read never makes a value up.
///
/// `code` and `hint` say whose file it is and what to do about it (`.journalUnreadable` for the
/// order journal, `.cacheDamaged` for the cache).
func storedCase<Value: RawRepresentable & CaseIterable>(
    _ raw: Value.RawValue, table: String, column: String, code: ErrorCode, hint: String? = nil
) throws -> Value {
    do {
        return try UnknownStoredValue.read(raw, table: table, column: column)
    } catch {
        throw RaxxError(code: code, message: "\(error).", hint: hint)
    }
}

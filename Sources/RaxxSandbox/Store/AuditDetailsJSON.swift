import Foundation

/// An audit entry's details as the audit trail stores them: a JSON object of strings, keys in
/// order, as JSONEncoder writes it with sorted keys (slashes escaped, as every row ever written
/// has them: the erasure finds a subject's values in the rows by this very text).
enum AuditDetailsJSON {
    static func text(_ details: [String: String]) -> String {
        encoded(details)
    }

    /// `text` as a value of the details is written: quoted and escaped.
    static func quoted(_ text: String) -> String {
        encoded(text)
    }

    private static func encoded(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Strings and objects of strings always encode.
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}

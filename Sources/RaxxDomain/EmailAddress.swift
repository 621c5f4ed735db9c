import Foundation

/// An email address the platform will mail: one rule for registration, `raxx-dsr open`,
/// `raxx-sandbox seed` and `staff grant`, on both sides of the API.
///
/// Email is the platform's only contact channel, so an address becomes a `To:` header and a row
/// of the database. What is refused is what could break either: more than 254 bytes of UTF-8
/// (RFC 5321's limit on a path, counted in bytes, not characters), control and format characters
/// (NUL, ESC, backspace, bidirectional overrides), white space, and the characters that would end
/// the address inside a header or start another (`<`, `>`, `,`, `;`, `:`, `"`, `` ` ``, `\`, `(`,
/// `)`, `[`, `]`). There is one `@`, with something before it, and a domain of dot-separated
/// labels, at least two, none empty. An apostrophe stays allowed (`o'brien@x.test`). An address is
/// kept lowercased and in Unicode's composed form (NFC).
public enum EmailAddress {
    /// RFC 5321 §4.5.3.1.3: a path is at most 256 octets with its angle brackets.
    public static let maxBytes = 254

    /// Why an address was refused, for a person.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case empty
        case tooLong(bytes: Int)
        case forbiddenCharacter(Unicode.Scalar)
        case notOneAt
        case noLocalPart
        case badDomain

        public var description: String {
            switch self {
            case .empty: "is empty"
            case .tooLong(let bytes): "is \(bytes) bytes long; an email address is at most \(EmailAddress.maxBytes)"
            case .forbiddenCharacter(let scalar): "has \(EmailAddress.describe(scalar)), which no email address the platform mails may have"
            case .notOneAt: "must have exactly one '@'"
            case .noLocalPart: "has nothing before the '@'"
            case .badDomain: "must end in a domain with a dot (name@example.com)"
            }
        }
    }

    /// The characters that end an address inside a header or start another one.
    static let specials: Set<Unicode.Scalar> = ["<", ">", ",", ";", ":", "\"", "`", "\\", "(", ")", "[", "]"]

    /// `text` with the white space around it trimmed and lowercased, or why it is refused.
    public static func normalized(_ text: String) throws(Refusal) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .empty }
        // Counted before anything else is read, so that a megabyte of text is refused at once.
        guard trimmed.utf8.count <= maxBytes else { throw .tooLong(bytes: trimmed.utf8.count) }
        // In one form (NFC), so that an address typed with a composed or a decomposed "é" is one
        // address, to Swift and to SQLite alike.
        let email = trimmed.lowercased().precomposedStringWithCanonicalMapping
        // Lowercasing can lengthen a few characters' UTF-8 ("İ" becomes "i̇").
        guard email.utf8.count <= maxBytes else { throw .tooLong(bytes: email.utf8.count) }
        if let bad = email.unicodeScalars.first(where: isForbidden) { throw .forbiddenCharacter(bad) }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw .notOneAt }
        guard !parts[0].isEmpty else { throw .noLocalPart }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else { throw .badDomain }
        return email
    }

    /// Whether `text` is an address the platform mails as it is (already normalized).
    public static func isMailable(_ text: String) -> Bool {
        (try? normalized(text)) == text
    }

    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        if specials.contains(scalar) || scalar.properties.isWhitespace { return true }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return true
        default: return false
        }
    }

    /// A character as a person can read it in a message: printable ones quoted, others by code point.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        let code = String(format: "U+%04X", scalar.value)
        return specials.contains(scalar) ? "'\(Character(scalar))' (\(code))" : "the character \(code)"
    }
}

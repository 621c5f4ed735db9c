import Crypto
import Foundation
import RaxxCore

/// Which audit events name an erasure's subject, and what of them the pseudonym replaces: the
/// actor, the subject, or a value of the details that is one of the subject's identifiers whole,
/// never part of a longer value (erasing bob@x.test leaves jimbob@x.test's events as they were).
/// Identifiers are compared without regard to ASCII case, as SQLite's NOCASE compares the emails
/// the schema keeps: a registration's event holds the email as typed, lowercased, `users` the
/// email as it was seeded, a DSR event's details the staff member's as `users` has it.
/// `ErasureRule.auditNamingSubject` selects the same events in SQL, for the plan and the export.
struct AuditPseudonymisation: Sendable {
    let pseudonym: String
    /// The identifiers, folded.
    private let identifiers: Set<String>
    /// Each identifier as the details' JSON writes it (`AuditDetailsJSON`: quoted, escaped),
    /// folded: details holding none of them name no identifier, and are not decoded.
    private let quoted: [String]

    init(identifiers: [String], pseudonym: String) {
        let folded = Set(identifiers.filter { !$0.isEmpty }.map(Self.folded))
        self.identifiers = folded
        self.quoted = folded.map(AuditDetailsJSON.quoted)
        self.pseudonym = pseudonym
    }

    /// Whether `value`, whole, is one of the identifiers.
    func names(_ value: String) -> Bool { identifiers.contains(Self.folded(value)) }

    /// An event's actor, subject and details (`AuditDetailsJSON`'s text) with each value that
    /// names the subject replaced by the pseudonym; nil when none does.
    func pseudonymised(actor: String, subject: String, details: String) -> (actor: String, subject: String, details: String)? {
        let byActor = names(actor), bySubject = names(subject)
        var replaced: String?
        let text = Self.folded(details)
        if quoted.contains(where: { text.contains($0) }),
            var values = try? JSONDecoder().decode([String: String].self, from: Data(details.utf8)),
            values.values.contains(where: names)
        {
            for (key, value) in values where names(value) { values[key] = pseudonym }
            replaced = AuditDetailsJSON.text(values)
        }
        guard byActor || bySubject || replaced != nil else { return nil }
        return (byActor ? pseudonym : actor, bySubject ? pseudonym : subject, replaced ?? details)
    }

    /// ASCII letters lowercased, as SQLite's NOCASE folds them; every other character as it is.
    static func folded(_ text: String) -> String {
        guard text.utf8.contains(where: { (65...90).contains($0) }) else { return text }
        return String(decoding: text.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
    }
}

/// An erasure's subject: the user and account under the request's email, and every identifier of
/// theirs that the erasure removes, or replaces with their pseudonym (`ErasurePseudonyms`). Read by
/// the store when the erasure starts and saved with the request (`erasure_identifiers`): the
/// history's chunks and the last transaction work from it once the rows that held them are gone.
struct ErasureSubject: Codable, Sendable, Equatable {
    var userID: String
    var accountID: String?
    var email: String
    var pseudonym: String
    var credentialIDs: [String] = []
    var sessionIDs: [String] = []
    var deviceIDs: [String] = []

    /// Every identifier that may stand for the subject in the audit trail.
    var identifiers: [String] {
        [userID, email] + (accountID.map { [$0] } ?? []) + credentialIDs + sessionIDs + deviceIDs
    }

    /// What the audit trail's pseudonymisation replaces for this subject: its identifiers, by its
    /// pseudonym.
    var auditPseudonymisation: AuditPseudonymisation { AuditPseudonymisation(identifiers: identifiers, pseudonym: pseudonym) }
}

/// What stands for an erased person where something of them is kept: keyed hashes under the
/// sandbox's pseudonym key (`DSRKeys`, kept in the database), the same for the same person, and
/// telling nobody without the key whom they stand for.
enum ErasurePseudonyms {
    /// A user's pseudonym, in the audit trail and their `users` row until it goes: `psn_` and the
    /// first 16 hex digits of the keyed hash of `user:` and the user's id.
    static func pseudonym(userID: String, key: SymmetricKey) -> String { "psn_" + mac("user:" + userID, key: key).prefix(16) }

    /// The keyed hash standing for an email after erasure (the requests' subject, the staff member
    /// who opened or verified one, the receipt's subject): `hmac-sha256:` and the keyed hash of
    /// `email:` and the email lowercased.
    static func subjectHash(email: String, key: SymmetricKey) -> String { "hmac-sha256:" + mac("email:" + email.lowercased(), key: key) }

    /// HMAC-SHA256 of `text` under `key`, in lowercase hex.
    static func mac(_ text: String, key: SymmetricKey) -> String {
        ASCIIHex.lowercase(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key))
    }
}

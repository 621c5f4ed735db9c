import Foundation
import RaxxAge
import RaxxCore

/// How an export is written: plain JSON, or the age format (age-encryption.org/v1) so the
/// requester opens it with the standard `age` tool — to an X25519 recipient (`age1…`) or with a
/// passphrase (scrypt). The cipher is RaxxAge's (libsodium and swift-crypto primitives).
public enum ExportEncryption {
    case none
    case recipients([AgeX25519Recipient])
    case passphrase(AgePassphrase)

    /// `--encrypt-to` recipients, checked before anything is sent (exit 65 naming the field).
    public static func recipients(_ texts: [String]) throws(RaxxError) -> ExportEncryption {
        var recipients: [AgeX25519Recipient] = []
        for text in texts { recipients.append(try AgeX25519Recipient(text, field: "encrypt-to")) }
        return .recipients(recipients)
    }

    /// The shortest passphrase a personal-data export is sealed with: the file may travel by
    /// email or a shared drive, where anyone can guess offline at scrypt's pace.
    public static let minimumPassphraseCharacters = 12

    /// `--passphrase-fd`'s passphrase, held to `minimumPassphraseCharacters` (exit 65).
    public static func checkedPassphrase(_ passphrase: AgePassphrase) throws(RaxxError) -> ExportEncryption {
        guard passphrase.characters >= minimumPassphraseCharacters else {
            throw RaxxError.badInput(field: "passphrase", "A personal-data export's passphrase has at least \(minimumPassphraseCharacters) characters.")
        }
        return .passphrase(passphrase)
    }

    /// The bytes to write: `plaintext` itself, or an age file of it. The passphrase is wiped once used.
    public func seal(_ plaintext: Data) throws(RaxxError) -> Data {
        let sink = AgeMemorySink()
        let encryptor: AgeEncryptor
        switch self {
        case .none: return plaintext
        case .recipients(let recipients): encryptor = try AgeEncryptor(recipients: recipients, sink: sink)
        case .passphrase(let passphrase): encryptor = try AgeEncryptor(passphrase: passphrase, sink: sink)
        }
        try encryptor.write(contentsOf: plaintext)
        try encryptor.finish()
        return Data(sink.bytes)
    }
}

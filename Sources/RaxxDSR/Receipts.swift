import Crypto
import Foundation
import RaxxAPI
import RaxxCore
import RaxxWire

/// Erasure receipts: the sandbox signs the canonical JSON of the receipt's body with Ed25519;
/// anyone holding the server's public key checks it, offline.
public enum Receipts {
    /// The most a receipt file may hold (a receipt is a few KiB).
    public static let maxFileBytes = 1 << 20

    /// Whether `receipt`'s signature verifies under `key`.
    public static func verifies(_ receipt: Components.Schemas.DSRReceipt, key: KeptReceiptKey) -> Bool {
        guard receipt.algorithm == .ed25519, key.algorithm == "Ed25519", receipt.keyId == key.key_id,
            let raw = Base64URL.decode(key.public_key), let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: raw),
            let signature = Base64URL.decode(receipt.signature), let body = try? CanonicalJSON.data(receipt.receipt)
        else { return false }
        return publicKey.isValidSignature(Data(signature), for: body)
    }

    /// A receipt file's content (as `raxx-dsr receipt` writes it), or exit 65 when it is none.
    ///
    /// The signature covers the receipt as decoded, so a lenient reading would vouch for bytes
    /// nobody signed: a field added inside the receipt (dropped by the decoder), a second
    /// `"receipt"` key after the signed one (which jq and Python read instead), content after the
    /// document. So the file must be exactly the receipt's canonical JSON (RFC 8785: sorted keys,
    /// no insignificant white space), as `raxx-dsr receipt` prints it, with at most its one
    /// newline; anything else is refused (exit 1) before the signature is checked.
    public static func parse(_ data: Data) throws(RaxxError) -> Components.Schemas.DSRReceipt {
        guard let receipt = try? JSONDecoder().decode(Components.Schemas.DSRReceipt.self, from: data) else {
            throw RaxxError.badInput(field: "receipt", "the file is not a raxx-dsr receipt (JSON with receipt, algorithm, key_id, signature)")
        }
        let text = data.last == UInt8(ascii: "\n") ? data.dropLast() : data[...]
        guard let canonical = try? CanonicalJSON.data(receipt), canonical.elementsEqual(text) else {
            throw RaxxError(
                code: .receiptInvalid, message: "The file is not exactly the signed receipt: it has a field added, repeated or reordered, or content after it.",
                hint: "Keep the receipt as raxx-dsr receipt printed it (a reformatted copy, say by jq, is refused too).")
        }
        return receipt
    }

    /// The server's key as kept: `key`'s own ID is checked against its bytes.
    public static func keep(_ key: Components.Schemas.DSRReceiptKey, origin: String, now: Date) throws(RaxxError) -> KeptReceiptKey {
        guard let raw = Base64URL.decode(key.publicKey), raw.count == 32,
            String(Base64URL.encode(SHA256.hash(data: raw)).prefix(16)) == key.keyId
        else {
            throw RaxxError(code: .badResponse, message: "The server's receipt key does not match its key ID.")
        }
        return KeptReceiptKey(origin: origin, algorithm: key.algorithm.rawValue, keyID: key.keyId, publicKey: key.publicKey, keptAt: now)
    }
}

/// An access export as written to a file: the server's document, each table's rows checked
/// against the manifest's count and SHA-256 before a byte is written.
public enum ExportDocument {
    /// The document's bytes (canonical JSON and a newline), or a failure when its manifest does
    /// not match its content.
    public static func bytes(_ export: Components.Schemas.DSRExport) throws(RaxxError) -> Data {
        let tables = export.tables.additionalProperties
        for entry in export.manifest.tables {
            guard let rows = tables[entry.table], Int64(rows.count) == entry.rows,
                let data = try? CanonicalJSON.data(rows),
                ASCIIHex.lowercase(SHA256.hash(data: data)) == entry.sha256
            else {
                throw RaxxError(code: .badResponse, message: "The export's table \(entry.table) does not match its manifest.")
            }
        }
        guard Set(tables.keys) == Set(export.manifest.tables.map(\.table)),
            var data = try? CanonicalJSON.data(export)
        else {
            throw RaxxError(code: .badResponse, message: "The export's tables do not match its manifest.")
        }
        data.append(UInt8(ascii: "\n"))
        return data
    }
}

import Crypto
import Foundation
import RaxxCore
import RaxxWire

/// A token-based provider authentication token: an ES256 JWT with header `{"alg":"ES256","kid":…}`
/// and claims `{"iss":team,"iat":seconds}`, as APNs reads it from `authorization: bearer …`.
public struct ProviderToken: Sendable, Equatable {
    public var keyID: String
    public var teamID: String
    public var issuedAt: Int64
    /// The compact JWS: base64url(header).base64url(claims).base64url(r||s).
    public var compact: String

    /// APNs refuses a token older than an hour.
    public static let maxAge: Int64 = 3600
    /// APNs answers TooManyProviderTokenUpdates to a key whose token changes more often than this.
    public static let minRefreshInterval: Int64 = 20 * 60

    /// Mints a token signed with `key`.
    public static func sign(keyID: String, teamID: String, issuedAt: Int64, key: P256.Signing.PrivateKey) throws -> ProviderToken {
        let header = try CanonicalJSON.data(Header(alg: "ES256", kid: keyID))
        let claims = try CanonicalJSON.data(Claims(iss: teamID, iat: issuedAt))
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return ProviderToken(
            keyID: keyID, teamID: teamID, issuedAt: issuedAt,
            compact: signingInput + "." + Base64URL.encode(signature.rawRepresentation))
    }

    private struct Header: Encodable { var alg: String; var kid: String }
    private struct Claims: Encodable { var iss: String; var iat: Int64 }

    /// Why a presented token is refused.
    public enum Refusal: Error, Sendable, Equatable {
        case malformed
        case unknownKey
        case badSignature
    }

    /// Parses and verifies a compact JWS against the public key registered for its `kid`.
    /// Age and refresh rules are the caller's: they depend on the clock and on history.
    public static func verify(_ compact: String, publicKey: (String) -> P256.Signing.PublicKey?) throws(Refusal) -> ProviderToken {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(String(parts[0])),
            let claimBytes = Base64URL.decode(String(parts[1])),
            let signatureBytes = Base64URL.decode(String(parts[2])),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any],
            header["alg"] as? String == "ES256",
            let kid = header["kid"] as? String,
            let iss = claims["iss"] as? String,
            let iat = (claims["iat"] as? NSNumber)?.int64Value
        else { throw .malformed }
        guard let key = publicKey(kid) else { throw .unknownKey }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { throw .badSignature }
        return ProviderToken(keyID: kid, teamID: iss, issuedAt: iat, compact: compact)
    }
}

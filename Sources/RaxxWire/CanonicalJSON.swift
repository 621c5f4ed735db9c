import Crypto
import Foundation
import RaxxCore

/// The canonical form of an action, so that a step-up can be bound to exactly that action:
/// JSON with sorted keys and no insignificant white space, hashed with SHA-256, base64url.
/// The client and the server compute it from the same values with the same encoder.
public enum CanonicalJSON {
    public static func data(_ value: some Encodable) throws -> Data {
        // The same encoder as JSON Lines: sorted keys, compact, RFC 3339 dates.
        try JSONLines.encoder().encode(value)
    }

    /// base64url(SHA-256(canonical JSON)) of `value`, made of strings, whole numbers and nil
    /// (which canonical encoding cannot fail on).
    public static func hash(_ value: some Encodable) -> String {
        Base64URL.encode(SHA256.hash(data: (try? data(value)) ?? Data()))
    }
}

/// An action a step-up can be bound to: an order, an erasure plan — anything whose fields, in
/// canonical JSON, say exactly what is being approved. The client asks for a grant bound to
/// `actionHash`; the server recomputes it from the request it receives and spends the grant only
/// for that hash.
public protocol StepUpAction: Encodable, Sendable {}

extension StepUpAction {
    /// base64url(SHA-256(canonical JSON)).
    public var actionHash: String { CanonicalJSON.hash(self) }
}

import Foundation

/// The canonical form of an action, so that a step-up can be bound to exactly that action:
/// JSON with sorted keys and no insignificant white space, hashed with SHA-256, base64url.
/// The client and the server compute it from the same values with the same encoder.
public enum CanonicalJSON {
    public static func data(_ value: some Encodable) throws -> Data {
        // The same encoder as JSON Lines: sorted keys, compact, RFC 3339 dates.
        try JSONLines.encoder().encode(value)
    }
}

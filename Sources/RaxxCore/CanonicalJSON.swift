import Foundation

/// The canonical form of an action, so that a step-up can be bound to exactly that action:
/// JSON with sorted keys and no insignificant white space, hashed with SHA-256, base64url.
/// The client and the server compute it from the same values with the same encoder.
public enum CanonicalJSON {
    public static func data(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(RFC3339.string(from: date))
        }
        return try encoder.encode(value)
    }
}

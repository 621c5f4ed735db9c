import Foundation
import RaxxWire

/// The keystore's JSON read directly, in one pass over its bytes (`FlatJSONObject`, once per
/// object), with no Codable on the way: JSONDecoder's generic metadata and conformance look-ups
/// were a third of `raxx-auth status`'s run. It reads what `Keystore.save` writes (version 2,
/// JSONEncoder's output, its slashes escaped) and answers nil for anything else — a version 1 file,
/// an exponent, a `\u0000`, a number where a string goes, a key twice — which `Keystore.load` reads the
/// general way (JSONDecoder), which says what is wrong. What it does answer is what JSONDecoder
/// reads (a property test holds the two to each other); unknown keys are passed over, as there.
extension KeystoreContents {
    public init?(directJSON bytes: [UInt8]) {
        guard let top = FlatJSONObject(bytes) else { return nil }
        var version: Int64?
        var servers: [String: ServerCredentials] = [:]
        var unbound: StoredCredential?
        for (key, value) in top.members {
            switch key {
            case KeystoreKey.version.rawValue:
                guard case .integer(let number) = value else { return nil }
                version = number
            case KeystoreKey.servers.rawValue:
                switch value {
                case .null: break
                case .object(let bytes):
                    guard let read = DirectJSON.servers(bytes) else { return nil }
                    servers = read
                default: return nil
                }
            case KeystoreKey.unboundCredential.rawValue:
                guard let read = DirectJSON.optional(value, StoredCredential.init(direct:)) else { return nil }
                unbound = read
            default:
                continue
            }
        }
        // A version 1 keystore (no version) is read the general way.
        guard version == 2 else { return nil }
        self.init(servers: servers, unboundCredential: unbound)
    }
}

extension ServerCredentials {
    init?(direct object: FlatJSONObject) {
        var credential: StoredCredential?, session: StoredSession?
        for (key, value) in object.members {
            switch key {
            case KeystoreKey.credential.rawValue:
                guard let read = DirectJSON.optional(value, StoredCredential.init(direct:)) else { return nil }
                credential = read
            case KeystoreKey.session.rawValue:
                guard let read = DirectJSON.optional(value, StoredSession.init(direct:)) else { return nil }
                session = read
            default:
                continue
            }
        }
        self.init(credential: credential, session: session)
    }
}

extension StoredCredential {
    init?(direct object: FlatJSONObject) {
        let fields = DirectJSON.Fields(object)
        guard let credentialID = fields.string(.credentialID), let rpID = fields.string(.rpID),
            let userHandle = fields.string(.userHandle), let email = fields.string(.email),
            let publicKey = fields.string(.publicKey), let sealedPrivateKey = fields.string(.sealedPrivateKey),
            let pinSalt = fields.string(.pinSalt), let pinOpsLimit = fields.integer(.pinOpsLimit, as: UInt64.self),
            let pinMemLimit = fields.integer(.pinMemLimit, as: UInt64.self), let signCount = fields.integer(.signCount, as: UInt32.self),
            let failedPINAttempts = fields.integer(.failedPINAttempts, as: Int.self), let createdAt = fields.date(.createdAt)
        else { return nil }
        self.init(
            credentialID: credentialID, rpID: rpID, userHandle: userHandle, email: email, publicKey: publicKey,
            sealedPrivateKey: sealedPrivateKey, pinSalt: pinSalt, pinOpsLimit: pinOpsLimit, pinMemLimit: pinMemLimit,
            signCount: signCount, failedPINAttempts: failedPINAttempts, createdAt: createdAt)
    }
}

extension StoredSession {
    init?(direct object: FlatJSONObject) {
        let fields = DirectJSON.Fields(object)
        guard let email = fields.string(.email), let accountID = fields.string(.accountID),
            let accessToken = fields.string(.accessToken), let accessExpiresAt = fields.date(.accessExpiresAt),
            let renewalToken = fields.string(.renewalToken), let sessionExpiresAt = fields.date(.sessionExpiresAt),
            let signedInAt = fields.date(.signedInAt), let accessIssuedAt = fields.optionalDate(.accessIssuedAt)
        else { return nil }
        self.init(
            email: email, accountID: accountID, accessToken: accessToken, accessExpiresAt: accessExpiresAt,
            renewalToken: renewalToken, sessionExpiresAt: sessionExpiresAt, signedInAt: signedInAt,
            accessIssuedAt: accessIssuedAt)
    }
}

/// The pieces the keystore's types read with.
private enum DirectJSON {
    /// The servers by origin: each an object.
    static func servers(_ bytes: [UInt8]) -> [String: ServerCredentials]? {
        guard let object = FlatJSONObject(bytes) else { return nil }
        var servers: [String: ServerCredentials] = [:]
        for (origin, value) in object.members {
            guard case .object(let bytes) = value, let nested = FlatJSONObject(bytes),
                let credentials = ServerCredentials(direct: nested)
            else { return nil }
            servers[origin] = credentials
        }
        return servers
    }

    /// An optional object (absent or null: nil), as `Optional<T>?`: the outer nil when it is unreadable.
    static func optional<T>(_ value: FlatJSONObject.Value, _ read: (FlatJSONObject) -> T?) -> T?? {
        switch value {
        case .null:
            return .some(nil)
        case .object(let bytes):
            guard let object = FlatJSONObject(bytes), let read = read(object) else { return nil }
            return .some(read)
        default:
            return nil
        }
    }

    /// An object's members by key. (No dictionary keyed by `KeystoreKey`, and no
    /// `KeystoreKey(rawValue:)`: each costs a start-up a scan of the program's conformances.)
    struct Fields {
        let members: [(key: String, value: FlatJSONObject.Value)]

        init(_ object: FlatJSONObject) { members = object.members }

        subscript(_ key: KeystoreKey) -> FlatJSONObject.Value? {
            let name = key.rawValue
            return members.first { $0.key == name }?.value
        }

        func string(_ key: KeystoreKey) -> String? {
            guard case .string(let text) = self[key] else { return nil }
            return text
        }

        func integer<T: FixedWidthInteger>(_ key: KeystoreKey, as: T.Type) -> T? {
            guard case .integer(let number) = self[key] else { return nil }
            return T(exactly: number)
        }

        /// Seconds since 1970, as JSONEncoder's `.secondsSince1970` writes them.
        func date(_ key: KeystoreKey) -> Date? {
            switch self[key] {
            case .integer(let number): Date(timeIntervalSince1970: Double(number))
            case .number(let text): Double(text).map(Date.init(timeIntervalSince1970:))
            default: nil
            }
        }

        /// Absent or null: nil (the outer optional is nil when it is something else).
        func optionalDate(_ key: KeystoreKey) -> Date?? {
            switch self[key] {
            case nil, .null?: .some(nil)
            default: date(key).map { .some($0) }
            }
        }
    }
}

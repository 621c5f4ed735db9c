import Crypto
import Foundation
import RaxxAPNs
import Synchronization

/// APNs's rules for provider tokens, with the history they need:
/// - the ES256 signature verifies against the public key registered for the token's `kid`, and
///   `iss` is the team (else 403 InvalidProviderToken);
/// - `iat` is at most an hour old (else 403 ExpiredProviderToken) and not in the future beyond
///   `allowedSkew` (else 403 InvalidProviderToken);
/// - a key's token changes at most every 20 minutes (else 429 TooManyProviderTokenUpdates), except
///   right after this endpoint answered ExpiredProviderToken for that key;
/// - a connection keeps the key of its first push (else 403 UnrelatedKeyIdInToken);
/// - scripted: with `expireAfter` N, a token under which N pushes were accepted is answered
///   ExpiredProviderToken from then on, so a test can see a client refresh once.
///
/// Each distinct token is verified once (ECDSA per push would cap the rate); the verdict is kept.
// @unchecked: swift-crypto's P256 public keys are immutable but not marked Sendable; the mutable state is in a Mutex.
public final class ProviderTokenGate: @unchecked Sendable {
    public let teamID: String
    public let keys: [String: P256.Signing.PublicKey]
    public let expireAfter: Int?
    /// How far in the future an `iat` may be, for clocks that disagree a little.
    public let allowedSkew: Int64

    private let state = Mutex(State())

    private struct State {
        /// Tokens whose signature and issuer verified, by their compact form.
        var tokens: [String: TokenRecord] = [:]
        /// Tokens refused for their form, key or signature (bounded: cleared when it grows large).
        var refused: [String: APNsReason] = [:]
        /// Per key: the token now in use and whether its next new token is exempt from the 20 minutes.
        var keyState: [String: KeyState] = [:]
    }

    private struct TokenRecord {
        var token: ProviderToken
        var accepted = 0
        /// Seen as a key's current token (a token never adopted is a new token for its key).
        var adopted = false
    }

    private struct KeyState {
        var current: String
        /// When (server time, seconds) the current token was adopted.
        var adoptedAt: Int64
        /// ExpiredProviderToken was answered for this key since the current token was adopted.
        var refreshExempt = false
    }

    public init(teamID: String, keys: [String: P256.Signing.PublicKey], expireAfter: Int? = nil, allowedSkew: Int64 = 60) {
        self.teamID = teamID
        self.keys = keys
        self.expireAfter = expireAfter
        self.allowedSkew = allowedSkew
    }

    /// A token admitted for one push.
    public struct Admission: Sendable, Equatable {
        public var keyID: String
        public var issuedAt: Int64
        /// The compact token, to count the push against it once it is accepted.
        public var compact: String
    }

    /// Checks `compact` at server time `now` (seconds) for a connection whose first key was
    /// `connectionKeyID` (nil before its first admitted push).
    public func admit(_ compact: String, now: Int64, connectionKeyID: String?) -> Result<Admission, PushRefusal> {
        enum Known { case valid(TokenRecord), refused(APNsReason), unknown }
        let known: Known = state.withLock { state in
            if let reason = state.refused[compact] { return .refused(reason) }
            return state.tokens[compact].map(Known.valid) ?? .unknown
        }
        let record: TokenRecord
        switch known {
        case .refused(let reason):
            return .failure(.init(reason))
        case .valid(let seen):
            record = seen
        case .unknown:
            // Verified outside the lock: other connections go on meanwhile.
            switch verify(compact) {
            case .failure(let refusal):
                state.withLock { state in
                    if state.refused.count >= 4096 { state.refused.removeAll(keepingCapacity: true) }
                    state.refused[compact] = refusal.reason
                }
                return .failure(refusal)
            case .success(let token):
                record = TokenRecord(token: token)
            }
        }
        let token = record.token
        if let connectionKeyID, connectionKeyID != token.keyID { return .failure(.init(.unrelatedKeyIdInToken)) }
        if token.issuedAt > now + allowedSkew { return .failure(.init(.invalidProviderToken)) }

        return state.withLock { state -> Result<Admission, PushRefusal> in
            var record = state.tokens[compact] ?? record
            defer { state.tokens[compact] = record }
            let expiredByScript = expireAfter.map { record.accepted >= $0 } ?? false
            if now - token.issuedAt > ProviderToken.maxAge || expiredByScript {
                if state.keyState[token.keyID]?.current == compact { state.keyState[token.keyID]?.refreshExempt = true }
                return .failure(.init(.expiredProviderToken))
            }
            if !record.adopted {
                // A new token for its key: at most one every 20 minutes, unless the key's token was
                // just answered ExpiredProviderToken.
                if let key = state.keyState[token.keyID], !key.refreshExempt,
                    now - key.adoptedAt < ProviderToken.minRefreshInterval
                {
                    return .failure(.init(.tooManyProviderTokenUpdates))
                }
                record.adopted = true
                state.keyState[token.keyID] = KeyState(current: compact, adoptedAt: now)
            }
            return .success(Admission(keyID: token.keyID, issuedAt: token.issuedAt, compact: compact))
        }
    }

    /// Counts an accepted push against its token (for `expireAfter`).
    public func noteAccepted(_ admission: Admission) {
        guard expireAfter != nil else { return }
        state.withLock { $0.tokens[admission.compact]?.accepted += 1 }
    }

    private func verify(_ compact: String) -> Result<ProviderToken, PushRefusal> {
        let token: ProviderToken
        do {
            token = try ProviderToken.verify(compact) { keys[$0] }
        } catch {
            // Malformed, an unknown key and a bad signature are all, to Apple, an invalid token.
            return .failure(.init(.invalidProviderToken))
        }
        guard token.teamID == teamID else { return .failure(.init(.invalidProviderToken)) }
        return .success(token)
    }
}

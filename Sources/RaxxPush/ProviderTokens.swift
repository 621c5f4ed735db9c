import Crypto
import Foundation
import RaxxAPNs
import RaxxCore
import RaxxSecrets
import Synchronization

/// A provider token as it is kept and shared: the token and when it was minted (by the minting
/// provider's clock, which is what the reuse rules count).
public struct KeptToken: Sendable, Equatable, Codable {
    public var token: String
    public var keyID: String
    public var teamID: String
    /// Seconds since 1970, when it was minted.
    public var mintedAt: Int64
    /// Minted because APNs answered ExpiredProviderToken to the one before.
    public var afterExpiry: Bool

    enum CodingKeys: String, CodingKey {
        case token, keyID = "key_id", teamID = "team_id", mintedAt = "minted_at", afterExpiry = "after_expiry"
    }

    public init(token: String, keyID: String, teamID: String, mintedAt: Int64, afterExpiry: Bool = false) {
        self.token = token
        self.keyID = keyID
        self.teamID = teamID
        self.mintedAt = mintedAt
        self.afterExpiry = afterExpiry
    }
}

/// Where concurrent processes share the token of one key, under a lock.
public protocol TokenSharing: Sendable {
    /// Runs `body` with the shared token (nil when there is none or it is unreadable) while no
    /// other process can; what `body` answers is kept for the others.
    func update(_ body: (KeptToken?) throws(RaxxError) -> KeptToken) async throws(RaxxError) -> KeptToken
}

/// A 0600 file in the state folder (`apns/TEAM.KEYID.token`, JSON), with a lock file beside it.
public struct TokenFile: TokenSharing {
    public let path: URL
    public let lockPath: String
    /// How long to wait for another process's hold of the lock (it only mints and writes).
    public var lockWait: RaxxDuration
    /// The rule `apns/`, the token and its lock are held to: the configuration's, or by default
    /// the state folder as its own root.
    public let folders: PrivateFolders

    public init(stateDirectory: URL, teamID: String, keyID: String, lockWait: RaxxDuration = .seconds(30), folders: PrivateFolders? = nil) {
        let folder = stateDirectory.appendingPathComponent("apns", isDirectory: true)
        let name = Self.safe(teamID) + "." + Self.safe(keyID)
        path = folder.appendingPathComponent(name + ".token")
        lockPath = folder.appendingPathComponent(name + ".lock").path
        self.lockWait = lockWait
        self.folders = folders ?? PrivateFolders(roots: [stateDirectory.path])
    }

    private static func safe(_ s: String) -> String {
        String(s.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" ? Character($0) : "_" }.prefix(64))
    }

    public func update(_ body: (KeptToken?) throws(RaxxError) -> KeptToken) async throws(RaxxError) -> KeptToken {
        let folder = path.deletingLastPathComponent()
        try SecureFile.ensureDirectory(folder, in: folders)
        let held: FileLock
        do {
            held = try await FileLock.acquire(
                path: lockPath, in: folders, wait: lockWait,
                busy: RaxxError(
                    code: .tokenLockBusy, message: "Another process held the provider token's lock for too long.",
                    hint: "Look for a stuck raxx-notify push, or remove \(lockPath)."))
        } catch {
            throw error as? RaxxError ?? RaxxError(code: .tokenLock, message: "Could not lock \(lockPath): \(error)")
        }
        defer { held.release() }
        var current: KeptToken? = nil
        if SecureFile.exists(path: path.path) {
            try SecureFile.checkPrivate(path)
            let bytes = try SecureFile.read(path)
            current = bytes.withUnsafeBytes { try? JSONDecoder().decode(KeptToken.self, from: Data($0)) }
        }
        let next = try body(current)
        if next != current {
            let data: Data
            do { data = try JSONEncoder().encode(next) } catch { throw RaxxError(code: .internal, message: "Could not encode the token: \(error)") }
            let secret = SecretBytes(copying: data)
            defer { secret.wipe() }
            try SecureFile.writeAtomically(secret, to: path, in: folders)
        }
        return next
    }
}

/// The provider tokens of one key: reused for 20–50 minutes, never refreshed more often than every
/// 20 minutes, refreshed once when APNs answers ExpiredProviderToken, and shared (when `sharing`
/// is given) with every process using the same key, so that parallel dispatchers do not mint
/// competing tokens. Concurrent askers in one process wait for one exchange.
public actor ProviderTokens {
    /// A token younger than this is never replaced by routine (APNs: TooManyProviderTokenUpdates).
    public static let minimumAge: Int64 = 20 * 60
    /// A token is replaced once it is this old (APNs refuses tokens older than an hour).
    public static let refreshAge: Int64 = 50 * 60

    public nonisolated let keyID: String
    public nonisolated let teamID: String
    private let key: P256.Signing.PrivateKey
    private let sharing: (any TokenSharing)?
    private let clock: @Sendable () -> Date
    private var kept: KeptToken? {
        didSet { shown.withLock { $0 = kept } }
    }
    /// `kept`, readable without waiting on the actor (`usableNow`).
    private nonisolated let shown = Mutex<KeptToken?>(nil)
    private var exchanging: Task<(token: KeptToken, minted: Bool)?, any Error>?
    /// How many tokens this instance minted (tests, logs).
    public private(set) var minted = 0

    public init(
        key: P256.Signing.PrivateKey, keyID: String, teamID: String, sharing: (any TokenSharing)?,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.sharing = sharing
        self.clock = clock
    }

    private nonisolated var now: Int64 { Int64(clock().timeIntervalSince1970.rounded(.down)) }

    /// The kept token when it may be presented now, read without the actor (a sender's thread
    /// asks this for every notification); nil means ask `current()`, which replaces it. A kept
    /// token is ours (minted here or verified when taken from the shared file), so only its age is
    /// left to check, as `current()` checks it.
    public nonisolated func usableNow() -> KeptToken? {
        guard let kept = shown.withLock({ $0 }) else { return nil }
        return Self.isFresh(age: now - kept.mintedAt) ? kept : nil
    }

    /// Neither too old to present nor from the future (a minute's clock skew between processes allowed).
    static func isFresh(age: Int64) -> Bool {
        age >= -60 && age < refreshAge
    }

    /// The token to present now.
    public func current() async throws(RaxxError) -> KeptToken {
        while true {
            if let kept, Rules(self).isUsable(kept, known: kept) { return kept }
            if case .token(let token) = try await exchange(replacing: nil) { return token }
        }
    }

    /// APNs answered ExpiredProviderToken to `stale`: a fresh token to resend with, or nil when
    /// none may be minted now (`stale` is itself a fresh token minted after an expiry, younger
    /// than the 20-minute floor: APNs and this clock disagree, and another mint would not help).
    public func refresh(replacing stale: KeptToken) async throws(RaxxError) -> KeptToken? {
        while true {
            if let kept, kept.token != stale.token, Rules(self).isUsable(kept, known: kept) { return kept }
            switch try await exchange(replacing: stale) {
            case .token(let token): return token
            case .refused: return nil
            case .again: continue
            }
        }
    }

    private typealias Outcome = (token: KeptToken, minted: Bool)?
    private enum Exchanged { case token(KeptToken), refused, again }

    /// One look at the shared token (and a mint when it will not do) at a time: a caller that
    /// finds one under way waits for it and is told to look again.
    private func exchange(replacing stale: KeptToken?) async throws(RaxxError) -> Exchanged {
        if let pending = exchanging {
            settle(pending, try? await pending.value)
            return .again
        }
        let rules = Rules(self)
        let known = kept
        let sharing = self.sharing
        let task = Task<Outcome, any Error> {
            var refused = false
            var mintedHere = false
            let decide = { (shared: KeptToken?) throws(RaxxError) -> KeptToken in
                refused = false
                mintedHere = false
                if let stale {
                    if let shared, shared.token != stale.token, rules.isUsable(shared, known: known) { return shared }
                    if stale.afterExpiry && rules.now - stale.mintedAt < ProviderTokens.minimumAge {
                        refused = true
                        return shared ?? stale
                    }
                    mintedHere = true
                    return try rules.mint(afterExpiry: true)
                }
                if let shared, rules.isUsable(shared, known: known) { return shared }
                mintedHere = true
                return try rules.mint(afterExpiry: false)
            }
            let next: KeptToken
            if let sharing { next = try await sharing.update(decide) } else { next = try decide(known) }
            return refused ? nil : (next, mintedHere)
        }
        exchanging = task
        let outcome: Outcome
        do {
            outcome = try await task.value
        } catch {
            settle(task, nil)
            throw error as? RaxxError ?? RaxxError(code: .providerToken, message: "Could not get a provider token: \(error)")
        }
        settle(task, outcome)
        return outcome.map { .token($0.token) } ?? .refused
    }

    /// Takes an exchange's outcome, once (whichever of its waiters resumes first).
    private func settle(_ task: Task<Outcome, any Error>, _ outcome: Outcome) {
        guard exchanging == task else { return }
        exchanging = nil
        guard let outcome else { return }
        if outcome.minted { minted += 1 }
        kept = outcome.token
    }

    /// The reuse rules at one moment, free of the actor (they run under the shared file's lock).
    /// (The key is immutable, and signing with it is thread-safe: unchecked Sendable.)
    // @unchecked: holds swift-crypto's P256 private key, which is not marked Sendable.
    struct Rules: @unchecked Sendable {
        let keyID: String
        let teamID: String
        let key: P256.Signing.PrivateKey
        let now: Int64

        init(_ tokens: isolated ProviderTokens) {
            keyID = tokens.keyID
            teamID = tokens.teamID
            key = tokens.key
            now = tokens.now
        }

        /// Reusable: ours (same key and team, signed by our key) and neither too old nor from the future.
        func isUsable(_ token: KeptToken, known: KeptToken?) -> Bool {
            guard token.keyID == keyID, token.teamID == teamID, ProviderTokens.isFresh(age: now - token.mintedAt) else { return false }
            if token.token == known?.token { return true }
            let key = self.key
            guard let verified = try? ProviderToken.verify(token.token, publicKey: { $0 == keyID ? key.publicKey : nil }) else { return false }
            return verified.teamID == teamID
        }

        func mint(afterExpiry: Bool) throws(RaxxError) -> KeptToken {
            let token: ProviderToken
            do {
                token = try ProviderToken.sign(keyID: keyID, teamID: teamID, issuedAt: now, key: key)
            } catch {
                throw RaxxError(code: .tokenSigning, message: "Could not sign a provider token: \(error)")
            }
            return KeptToken(token: token.compact, keyID: keyID, teamID: teamID, mintedAt: now, afterExpiry: afterExpiry)
        }
    }
}

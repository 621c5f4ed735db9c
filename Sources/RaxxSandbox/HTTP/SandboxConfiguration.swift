import Foundation
import RaxxCore

/// How a sandbox runs. The relying party follows the address, by the rule the tools sign by: on a
/// loopback address it is `localhost` (origin `https://localhost`); elsewhere production's
/// (`raxx.app`, origin `https://raxx.app`), so the authenticator's output would verify against a
/// real Raptor too.
public struct SandboxConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// A file path, or `:memory:`.
    public var databasePath: String
    /// The WebAuthn origin clients must report.
    public var origin: String
    /// The WebAuthn relying party ID.
    public var relyingPartyID: String
    public var accessTokenTTL: RaxxDuration
    public var sessionTTL: RaxxDuration
    /// Orders whose notional is above this need a step-up.
    public var stepUpNotional: Decimal
    /// The simulated market's seed.
    public var marketSeed: UInt64
    /// How long the change log keeps tombstones; a sync cursor older than that gets a reset.
    public var changeRetention: RaxxDuration
    /// Fault injection: the replies to this many accepted orders are lost (the order stands).
    public var loseOrderReplies: Int = 0
    /// How often the background scan looks for sessions within 15 minutes of their end (and
    /// writes their `session_expiring` alert).
    public var sessionScanInterval: RaxxDuration = .seconds(30)
    /// The most rows one chunk of an erasure's history deletes or pseudonymises (one transaction).
    public var erasureChunkRows: Int = 20_000
    /// About how long one chunk of an erasure may hold the database's write lock (other accounts'
    /// writes wait behind it): chunks are sized to it. Measured with `Scripts/bench dsr`
    /// (10,000 positions, 1,000,000 fills, orders from another account all along, 2 cores):
    /// 1 ms chunks with a 2 ms yield took 2.81x sqlite3's one-transaction delete; 1 ms with no
    /// yield 2.85x; 5 ms with no yield 1.70x, the other account's p99 1.62x its p99 without
    /// (goal <= 2x); 8 ms 1.63x, p99 1.83x, too close to its goal for a gain within noise.
    public static let defaultErasureChunkBudget = RaxxDuration(milliseconds: 5)
    public var erasureChunkBudget: Duration = .milliseconds(defaultErasureChunkBudget.milliseconds)
    /// A pause between an erasure's chunks (tests stretch an erasure to crash it midway).
    public var erasureChunkPause: Duration = .zero
    /// The pause after each of an erasure's chunks while other requests keep coming (none when
    /// nobody else is asking). None by default: the chunks are queued behind the writes that
    /// came meanwhile, which is what other accounts' orders need (see `defaultErasureChunkBudget`).
    public static let defaultErasureYield = RaxxDuration(milliseconds: 0)
    public var erasureYield: Duration = .milliseconds(defaultErasureYield.milliseconds)
    /// How often the background scan fires the dead man's switches whose deadline passed or whose
    /// session ended.
    public var cancelAfterScanInterval: RaxxDuration = .seconds(1)
    /// The budgets of registration codes: guesses and mails per address, asks per client.
    public var codeLimits = RegistrationCodeLimits()

    public init(
        host: String = "127.0.0.1", port: Int = 8080, databasePath: String = ":memory:",
        origin: String? = nil, relyingPartyID: String? = nil,
        accessTokenTTL: RaxxDuration = .minutes(15), sessionTTL: RaxxDuration = .hours(12),
        stepUpNotional: Decimal = 10_000, marketSeed: UInt64 = 42,
        changeRetention: RaxxDuration = .hours(7 * 24)
    ) {
        self.host = host
        self.port = port
        self.databasePath = databasePath
        let rpID = relyingPartyID ?? (APIEndpoint.isLoopback(host: host) ? APIEndpoint.loopbackRPID : "raxx.app")
        self.relyingPartyID = rpID
        self.origin = origin ?? APIEndpoint.clientOrigin(rpID: rpID)
        self.accessTokenTTL = accessTokenTTL
        self.sessionTTL = sessionTTL
        self.stepUpNotional = stepUpNotional
        self.marketSeed = marketSeed
        self.changeRetention = changeRetention
    }
}

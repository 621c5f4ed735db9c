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
    /// writes wait behind it): chunks are sized to it.
    public var erasureChunkBudget: Duration = .milliseconds(1)
    /// A pause between an erasure's chunks (tests stretch an erasure to crash it midway).
    public var erasureChunkPause: Duration = .zero
    /// The pause after each of an erasure's chunks while other requests keep coming (none when
    /// nobody else is asking): the erasure gives way to other accounts' orders.
    public var erasureYield: Duration = .milliseconds(2)
    /// How often the background scan fires the dead man's switches whose deadline passed or whose
    /// session ended.
    public var cancelAfterScanInterval: RaxxDuration = .seconds(1)

    public init(host: String = "127.0.0.1", port: Int = 8080, databasePath: String = ":memory:",
                origin: String? = nil, relyingPartyID: String? = nil,
                accessTokenTTL: RaxxDuration = .minutes(15), sessionTTL: RaxxDuration = .hours(12),
                stepUpNotional: Decimal = 10_000, marketSeed: UInt64 = 42,
                changeRetention: RaxxDuration = .hours(7 * 24)) {
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

import Foundation
import RaxxAPI

// What the sandbox keeps, behind protocols. Handlers see these and never SQL, rows or a
// database; each method is one transaction. `SandboxDatabase.repositories` hands out the GRDB
// implementations (Repositories/GRDB).

/// Every repository a handler may need.
struct Repositories: Sendable {
    var health: any HealthRepository
    var auth: any AuthRepository
    var sessions: any SessionRepository
    var audit: any AuditRepository
    var trading: any TradingRepository
    var events: any EventRepository
    var devices: any DeviceRepository
    var dsr: any DSRRepository
    var trail: any AuditTrailRepository
    var pushDispatch: any PushDispatchRepository
}

// MARK: Health

protocol HealthRepository: Sendable {
    /// Throws when the database cannot be read.
    func ping() async throws
}

// MARK: Audit

/// One line of the append-only audit trail.
struct AuditEntry: Sendable, Equatable {
    var at: Date
    var actor: String
    var action: AuditAction
    var subject: String
    var details: [String: String] = [:]
}

protocol AuditRepository: Sendable {
    func record(_ entry: AuditEntry) async throws
}

// MARK: Sessions

/// What an access token stands for.
enum SessionLookup: Sendable, Equatable {
    case unknown
    case revoked
    /// A token of an erased account's session.
    case accountClosed
    /// The access token or the whole session is past its end.
    case expired
    case live(Caller)
}

/// A session about to start: its ID, its token hashes and its ends.
struct NewSession: Sendable {
    var id: String
    var accessTokenHash: String
    var accessExpiresAt: Date
    var renewalTokenHash: String
    var expiresAt: Date
    /// How the session was started (`registration`, `passkey`, …), for the audit trail.
    var method: String
}

/// The new token hashes of a renewed session.
struct RenewedTokens: Sendable {
    var accessTokenHash: String
    var accessExpiresAt: Date
    var renewalTokenHash: String
}

enum RenewalOutcome: Sendable, Equatable {
    /// Unknown token, revoked or ended session; the refusal is in the audit trail.
    case refused
    /// The token was spent already (rotated by an earlier renewal): someone holds a copy. The
    /// session is revoked, and the refusal, the revocation and a security alert are recorded.
    case reused
    /// A renewal token of an erased account's session.
    case accountClosed
    case renewed(sessionExpiresAt: Date, account: Components.Schemas.Account)
}

struct SessionTimes: Sendable, Equatable {
    var createdAt: Date
    var accessExpiresAt: Date
    var expiresAt: Date
}

protocol SessionRepository: Sendable {
    /// The caller behind an access token's hash, as of `now`.
    func lookup(accessTokenHash: String, now: Date) async throws -> SessionLookup
    /// Starts `session` for `userID` (audited) and answers the account it signs in to.
    func start(_ session: NewSession, userID: String, now: Date) async throws -> Components.Schemas.Account
    /// Rotates the tokens of the live session behind a renewal token's hash; `tokens` makes the
    /// new ones from the session's end, and the old renewal token is remembered as spent. A spent
    /// token presented again revokes its session (`.reused`). Refusals are audited.
    func renew(renewalTokenHash: String, now: Date, tokens: @escaping @Sendable (_ sessionExpiresAt: Date) -> RenewedTokens)
        async throws -> RenewalOutcome
    /// Revokes a session (audited).
    func revoke(sessionID: String, userID: String, now: Date) async throws
    /// A session's times and its user's account, or nil when either is gone.
    func session(id: String, userID: String) async throws -> (SessionTimes, Components.Schemas.Account)?
}

// MARK: Passkeys and challenges
//
// Every new challenge prunes the used and expired ones, every new grant the spent and expired
// ones, every new session those that ended a day ago (see `Pruning`).

enum ChallengePurpose: String, Sendable {
    case register, login
    case stepUp = "step_up"
}

/// A spent challenge and what it was issued for.
struct Challenge: Sendable, Equatable {
    var userID: String?
    var actionHash: String?
    var email: String?
    var displayName: String?
    var userHandle: [UInt8]?
}

/// The account already under an email a registration is for.
struct RegisteredUser: Sendable, Equatable {
    var id: String
    var handle: [UInt8]
    var credentialIDs: [String]
}

/// A registration challenge to record.
struct RegistrationChallenge: Sendable {
    var challenge: String
    var email: String
    var displayName: String?
    /// The user handle to offer when no account has the email yet.
    var newHandle: [UInt8]
    /// The session that asked, when the caller is signed in.
    var sessionID: String?
    var expiresAt: Date
}

/// What a registration offers: the user handle and the credentials to exclude.
struct RegistrationOffer: Sendable, Equatable {
    var handle: [UInt8]
    var excludedCredentialIDs: [String]
}

/// What the database says about a registration at verify time, for the handler to judge.
/// What became of a passkey's removal.
enum PasskeyRemoval: Sendable, Equatable {
    case removed
    /// No passkey of the user's has that ID.
    case notFound
    /// It is the user's only passkey.
    case last
    /// The grant is unknown, spent, expired, or bound to another action or user.
    case grantRefused
}

/// What became of a registration code presented.
enum CodeCheck: Sendable, Equatable {
    case accepted
    case wrong(triesLeft: Int)
    /// Expired, exhausted, spent, or never sent.
    case expired
}

struct RegistrationFacts: Sendable, Equatable {
    struct Existing: Sendable, Equatable {
        var userID: String
        var handle: [UInt8]
        var hasPasskey: Bool
    }
    /// The account under the email, if there is one already.
    var existing: Existing?
    /// The credential ID is registered already (to anyone).
    var credentialTaken: Bool
}

/// A verified passkey to register, with the session it starts.
struct NewPasskey: Sendable {
    var credentialID: String
    var email: String
    var displayName: String?
    var userHandle: [UInt8]
    var publicKey: [UInt8]
    var signCount: UInt32
    var transports: [String]?
}

/// A registered passkey, for verifying an assertion.
struct StoredPasskey: Sendable, Equatable {
    var userID: String
    var publicKey: [UInt8]
    var signCount: UInt32
    var userHandle: [UInt8]
}

protocol AuthRepository: Sendable {
    /// Records a registration challenge (the emailed code, spent before, proved the address) and
    /// answers the user handle to offer and the credentials to exclude.
    func offerRegistration(_ challenge: RegistrationChallenge, now: Date) async throws -> RegistrationOffer
    /// Keeps a new one-time registration code for `email` (only its hash; replacing any earlier
    /// one) and emails it, in one transaction.
    func sendRegistrationCode(email: String, code: String, expiresAt: Date, now: Date) async throws
    /// Spends `email`'s code if `code` is it; a wrong one costs a try, and the last try, like
    /// expiry, deletes the code.
    func spendRegistrationCode(email: String, code: String, now: Date) async throws -> CodeCheck
    /// Records a sign-in challenge (for `email`'s account, when it has one) and answers that
    /// account's credential IDs, oldest first.
    func offerLogin(challenge: String, email: String?, expiresAt: Date, now: Date) async throws -> [String]
    /// Records a step-up challenge bound to `actionHash` and answers the user's credential IDs.
    func offerStepUp(challenge: String, userID: String, actionHash: String, expiresAt: Date, now: Date) async throws -> [String]
    /// Marks a challenge used, in a transaction of its own so that it is spent even when the
    /// response that carried it is then refused. Nil when unknown, used or expired.
    func consumeChallenge(_ challenge: String, purpose: ChallengePurpose, now: Date) async throws -> Challenge?
    /// Registers `passkey`, creating its account when new, and starts `session`, all in one
    /// transaction; `admit` judges the facts first and may refuse by throwing. Answers the user ID
    /// and account.
    func register(_ passkey: NewPasskey, session: NewSession, now: Date,
                  admit: @escaping @Sendable (RegistrationFacts) throws -> Void) async throws -> (userID: String, account: Components.Schemas.Account)
    func passkey(id: String) async throws -> StoredPasskey?
    /// Remembers a passkey's newest signature counter and when it was used.
    func recordAssertion(credentialID: String, signCount: UInt32, now: Date) async throws
    /// The user's passkeys, oldest first.
    func passkeys(userID: String) async throws -> [Components.Schemas.Passkey]
    /// Removes the user's passkey `id` in one transaction with the grant that approves it (spent),
    /// its audit record, a security alert and an email; never the user's last passkey.
    func removePasskey(id: String, userID: String, grantHash: String, actionHash: String, now: Date) async throws -> PasskeyRemoval
    /// Records a step-up grant (by hash) for `actionHash` (audited).
    func grantStepUp(grantHash: String, userID: String, actionHash: String, expiresAt: Date, now: Date) async throws
}

// MARK: Trading

/// Orders, fills, positions, cash and the change log. `write` and `read` are each one
/// transaction; the paper engine and the handlers work inside it through `TradingLedger`.
protocol TradingRepository: Sendable {
    func write<T: Sendable>(_ body: @escaping @Sendable (any TradingLedger) throws -> T) async throws -> T
    func read<T: Sendable>(_ body: @escaping @Sendable (any TradingLedger) throws -> T) async throws -> T
}

// MARK: Events (the alerts feed)

/// What a page of the feed asks for: the user's events after `cursor`, oldest first.
struct EventQuery: Sendable, Equatable {
    var user: String
    var after: Int64
    var limit: Int
    /// Only these types (nil: all).
    var types: [String]? = nil
    /// Only events created at or after this time.
    var since: Date? = nil
}

struct EventPage: Sendable {
    var events: [Components.Schemas.Event]
    /// More events match after the page's last.
    var hasMore: Bool
}

/// A session whose end is near, as the expiry scan notes it.
struct ExpiringSession: Sendable, Equatable {
    var sessionID: String
    var userID: String
    var expiresAt: Date
}

protocol EventRepository: Sendable {
    /// One page of `query`'s events.
    func events(_ query: EventQuery) async throws -> EventPage
    /// Writes `session_expiring` for every live session ending within `window` of `now` that has
    /// not had one yet (once per session), and answers those sessions. One transaction.
    func noteExpiringSessions(now: Date, window: TimeInterval) async throws -> [ExpiringSession]
}

// MARK: Devices (APNs)

/// A device to register: the token as APNs gave it (lowercase hex).
struct NewDevice: Sendable {
    var id: String
    var user: String
    var token: String
    var environment: String
    var label: String?
    var alerts: [String]
    var at: Date
}

/// A registration's outcome.
struct RegisteredDevice: Sendable {
    var device: Components.Schemas.Device
    /// The same token was registered for this user already (the device answers under its ID,
    /// re-activated and with the new label, environment and alerts).
    var existed: Bool
    /// It existed and had been revoked.
    var reactivated: Bool
}

protocol DeviceRepository: Sendable {
    /// Registers `device` (audited `device.registered`, with the token's suffix only); the same
    /// token again for the same user answers the existing device, re-activated if revoked.
    func register(_ device: NewDevice) async throws -> RegisteredDevice
    /// The user's active (not revoked) devices, oldest first.
    func activeDevices(user: String) async throws -> [Components.Schemas.Device]
    /// Revokes the user's device `id` (audited `device.revoked` the first time). False when the
    /// user has no such device.
    func revoke(id: String, user: String, now: Date) async throws -> Bool
}

// MARK: Audit trail (reading)

/// Whose audit trail: every event whose actor or subject is one of these identifiers.
struct AuditSubject: Sendable, Equatable {
    var userID: String
    var accountID: String?
}

struct AuditTrailPage: Sendable {
    var events: [Components.Schemas.AuditEvent]
    var hasMore: Bool
}

protocol AuditTrailRepository: Sendable {
    /// One page of `subject`'s trail after `cursor`, oldest first.
    /// The subject's audit events after `cursor`. `seenBySubject`: staff members appear by their
    /// role ("support staff"), not their identity, as the subject sees them (staff see the person).
    func trail(of subject: AuditSubject, after cursor: Int64, limit: Int, seenBySubject: Bool) async throws -> AuditTrailPage
    /// The user and account under `email`, if any.
    func subject(email: String) async throws -> AuditSubject?
}

// MARK: Data-subject requests

/// A request as the state machine sees it.
struct DSRState: Sendable, Equatable {
    var id: String
    var kind: Components.Schemas.DSRKind
    var status: Components.Schemas.DSRStatus
    var subject: String
    var ticket: String
    var receivedAt: Date
    var dueOn: String
    var extended: Bool
    var planHash: String?
}

/// What a transition changes, and how it is audited.
struct DSRUpdate: Sendable {
    var status: Components.Schemas.DSRStatus?
    var dueOn: String?
    var extensionReason: String?
    var verificationMethod: String?
    var closedReason: String?
    /// The audit action (`dsr.verified`, …); the entry carries the staff member and the ticket.
    var auditAction: AuditAction
    var auditDetails: [String: String] = [:]
}

struct NewDSRRequest: Sendable {
    var id: String
    var kind: Components.Schemas.DSRKind
    var email: String
    var ticket: String
    var receivedAt: Date
    var dueOn: String
    var staffUserID: String
    var now: Date
}

/// Where an erasure stands when asked to apply.
enum ErasureStart: Sendable {
    /// Completed before: nothing changes.
    case alreadyCompleted(Components.Schemas.DSRRequest)
    /// The identifiers are gone (now, or by an earlier run): the history chunks come next.
    case erasing
}

/// The outcome of one chunk of an erasure's history.
struct ErasureChunk: Sendable, Equatable {
    /// Rows deleted or pseudonymised.
    var rows: Int
    /// Where the next chunk's audit scan starts.
    var auditCursor: Int64
    /// Nothing is left to do in the history.
    var done: Bool
}

protocol DSRRepository: Sendable {
    /// Records a new request (audited), answering it as of `today`.
    func open(_ request: NewDSRRequest) async throws -> Components.Schemas.DSRRequest
    /// One request, or nil.
    func request(id: String, now: Date) async throws -> Components.Schemas.DSRRequest?
    /// Every request (with `status`, when given), soonest due first.
    func list(status: Components.Schemas.DSRStatus?, now: Date) async throws -> [Components.Schemas.DSRRequest]
    /// Applies `change` (the state machine's verdict on the current state) in one transaction,
    /// audited with the staff member and the ticket. Nil when there is no such request.
    func update(id: String, staffUserID: String, now: Date, _ change: @escaping @Sendable (DSRState) throws -> DSRUpdate)
        async throws -> Components.Schemas.DSRRequest?
    /// Everything held about the subject of request `id`, once `check` admits the request; the
    /// export is audited in the same transaction (the request completes at `confirmExport`).
    func export(id: String, staffUserID: String, now: Date, check: @escaping @Sendable (DSRState) throws -> Void)
        async throws -> Components.Schemas.DSRExport?
    /// The export of access request `id` was delivered: the request is completed (audited, the
    /// subject emailed). Refused (`invalid_state`) before an export was made; nil when unknown.
    func confirmExport(id: String, staffUserID: String, now: Date) async throws -> Components.Schemas.DSRRequest?
    /// The erasure plan of request `id` under `rules`, once `check` admits it; the request is
    /// `planned` with this plan's hash.
    func plan(id: String, rules: [ErasureRule], staffUserID: String, now: Date, check: @escaping @Sendable (DSRState) throws -> Void)
        async throws -> Components.Schemas.ErasurePlan?
    /// Starts (or resumes) the erasure of request `id` with the plan `planHash`, spending the
    /// step-up grant bound to it: the first transaction (access and identifiers). Throws the
    /// problems of a missing plan, a stale one, or a missing or invalid grant (audited refusals).
    func beginErasure(id: String, planHash: String, grant: String?, rules: [ErasureRule], staffUserID: String, now: Date)
        async throws -> ErasureStart
    /// The history of a started erasure, in chunks of one transaction each, sized by `sizing` (at
    /// most its rows, about its time each), with `pause` between them.
    func eraseHistory(id: String, rules: [ErasureRule], sizing: ErasureChunkSizing, pause: Duration, yield: ErasureYield) async throws
    /// The last transaction: the account and the user go, the requests' subject becomes its keyed
    /// hash, the receipt is signed and the request completed (audited). Idempotent.
    func completeErasure(id: String, rules: [ErasureRule], staffUserID: String, now: Date) async throws -> Components.Schemas.DSRRequest
    /// The signed receipt of a completed erasure, or nil.
    func receipt(id: String) async throws -> Components.Schemas.DSRReceipt?
    /// The receipt signing key's public half (made on first use).
    func receiptKey() async throws -> Components.Schemas.DSRReceiptKey
}

// MARK: Push dispatch (APNs)

/// A device an event goes to: active, opted into the event's type, registered before the event.
struct PushTarget: Sendable, Equatable {
    var deviceID: String
    var token: String
    var registeredAt: Date
}

/// An event the dispatcher has not handed out yet, with the devices it goes to.
struct PendingPush: Sendable {
    var event: Components.Schemas.Event
    var user: String
    var targets: [PushTarget]
}

protocol PushDispatchRepository: Sendable {
    /// Places the dispatcher's cursor at the newest event unless it has one already: what was
    /// written before push was turned on is never pushed. Answers the cursor.
    func start() async throws -> Int64
    /// Up to `limit` events after `cursor`, oldest first, with their targets.
    func pending(after cursor: Int64, limit: Int) async throws -> [PendingPush]
    /// Every event up to `seq` has been dispatched.
    func advance(to seq: Int64) async throws
    /// APNs answered that the device's token is not valid since `unregisteredAt`: revokes the
    /// device when it was registered before then (audited `device.unregistered`). False when it
    /// was registered again since, or is gone or revoked already.
    func revokeUnregistered(deviceID: String, unregisteredAt: Date, now: Date) async throws -> Bool
}

import Crypto
import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxWire

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
    /// Not a live code of the address; `triesLeft` wrong ones more are allowed in the window.
    case wrong(triesLeft: Int)
    /// No live code: expired, spent, or never sent.
    case expired
    /// The address's guesses are spent: none is read for `retryAfter` seconds.
    case limited(retryAfter: Int)
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

/// The key of the registration codes' hashes and sealed copies, made at random and never written.
struct CodeKey: Sendable {
    private let bytes: Data
    init() { bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) } }
    var key: SymmetricKey { SymmetricKey(data: bytes) }
}

/// On SQLite: challenges, passkeys, registrations and step-up grants.
struct AuthStore: Sendable {
    let writer: StoreWriter
    let notifier: EventNotifier
    let mailer: Mailer

    /// The key behind the codes' hashes and sealed copies: made when the database opens and kept
    /// only in memory, so that a copy of the database (a backup, a stolen file) can neither read a
    /// code nor test 10^8 of them against its hash. A restart voids the codes outstanding: their
    /// owners ask again.
    let codeKey: CodeKey

    /// How an address is found among the codes: a hash, so the table does not keep it (the
    /// erasure rules find the subject's rows by it too).
    static func emailHash(_ email: String) -> String {
        ASCIIHex.lowercase(SHA256.hash(data: Data(("raxx-email-code:" + email).utf8)))
    }

    func codeHash(_ code: String, emailHash: String) -> String {
        ASCIIHex.lowercase(HMAC<SHA256>.authenticationCode(for: Data(("code:" + emailHash + ":" + code).utf8), using: codeKey.key))
    }

    /// Mails `email` its live one-time code, or a new `code` when it has none (keeping the code's
    /// keyed hash, and a copy sealed under the same key so that it can be mailed again), unless
    /// the address has had its mails for the hour. A live code is never replaced: an ask by
    /// someone else does not spoil the code the person is typing; it mails the same code again.
    func askRegistrationCode(email: String, code: String, expiresAt: Date, now: Date, limits: RegistrationCodeLimits) async throws -> CodeAsk {
        let mailer = self.mailer, key = codeKey
        let hash = Self.emailHash(email)
        let fresh = (
            code: code, hash: codeHash(code, emailHash: hash),
            sealed: try ChaChaPoly.seal(
                Data(code.utf8), using: key.key,
                authenticating: Data(hash.utf8)
            ).combined
        )
        return try await writer.write { db -> CodeAsk in
            try Pruning.emailCodes(db, now: now)
            let mailed = try Double.fetchAll(
                db, sql: "SELECT at FROM email_code_attempts WHERE email_hash = ? AND kind = 'mailed' AND at > ?",
                arguments: [hash, now.timeIntervalSince1970 - RegistrationCodeLimits.mailWindow])
            if let wait = RegistrationCodeLimits.retryAfter(mailed, limit: limits.mailsPerAddress, window: RegistrationCodeLimits.mailWindow, now: now) {
                return .limited(retryAfter: wait)
            }
            var live: (code: String, expiresAt: Date)? = nil
            // A code with little time left is not mailed again (it would expire as it is read): a new one is.
            if let row = try Row.fetchOne(
                db, sql: "SELECT code_sealed, expires_at FROM email_codes WHERE email_hash = ? AND expires_at > ?",
                arguments: [hash, now.timeIntervalSince1970 + RegistrationCodeLimits.resendLeast]),
                let box = try? ChaChaPoly.SealedBox(combined: row["code_sealed"] as Data),
                let opened = try? ChaChaPoly.open(box, using: key.key, authenticating: Data(hash.utf8))
            {
                live = (String(decoding: opened, as: UTF8.self), Date(timeIntervalSince1970: row["expires_at"]))
            }
            if live == nil {
                // None, one about to expire, or one sealed under the key of an earlier run, which
                // nobody can check any more.
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO email_codes (email_hash, code_hash, code_sealed, expires_at, created_at) VALUES (?, ?, ?, ?, ?)
                        """, arguments: [hash, fresh.hash, fresh.sealed, expiresAt.timeIntervalSince1970, now.timeIntervalSince1970])
            }
            let (code, expires) = live ?? (fresh.code, expiresAt)
            try db.execute(
                sql: "INSERT INTO email_code_attempts (email_hash, kind, at) VALUES (?, 'mailed', ?)",
                arguments: [hash, now.timeIntervalSince1970])
            let minutes = max(Int((expires.timeIntervalSince(now) / 60).rounded()), 1)
            mailer.send(
                db,
                Mail(
                    to: email, subject: "Your Raxx registration code",
                    body: """
                        Your one-time code to register a passkey with Raxx:

                        \(code)

                        It works once, for \(minutes) minute\(minutes == 1 ? "" : "s"). If you did not ask for it, ignore this email: \
                        nobody can add a passkey to your account without it.
                        """))
            return .mailed(expiresAt: expires, again: live != nil)
        }
    }

    /// Spends `email`'s code if `code` is it. A wrong one counts against the address's budget of
    /// guesses (`RegistrationCodeLimits.guessesPerAddress` in 10 minutes, whatever codes were
    /// asked for); once it is spent, every code presented is refused unread until the oldest
    /// wrong guess leaves the window.
    func spendRegistrationCode(email: String, code: String, now: Date, limits: RegistrationCodeLimits) async throws -> CodeCheck {
        let hash = Self.emailHash(email), presented = codeHash(code, emailHash: hash)
        return try await writer.write { db -> CodeCheck in
            try Pruning.emailCodes(db, now: now)
            let wrong = try Double.fetchAll(
                db, sql: "SELECT at FROM email_code_attempts WHERE email_hash = ? AND kind = 'wrong' AND at > ?",
                arguments: [hash, now.timeIntervalSince1970 - RegistrationCodeLimits.guessWindow])
            let window = RegistrationCodeLimits.guessWindow
            if let wait = RegistrationCodeLimits.retryAfter(wrong, limit: limits.guessesPerAddress, window: window, now: now) {
                return .limited(retryAfter: wait)
            }
            guard let stored = try String.fetchOne(db, sql: "SELECT code_hash FROM email_codes WHERE email_hash = ?", arguments: [hash]) else {
                return .expired
            }
            if stored == presented {
                try db.execute(sql: "DELETE FROM email_codes WHERE email_hash = ?", arguments: [hash])
                return db.changesCount == 1 ? .accepted : .expired
            }
            try db.execute(
                sql: "INSERT INTO email_code_attempts (email_hash, kind, at) VALUES (?, 'wrong', ?)",
                arguments: [hash, now.timeIntervalSince1970])
            let spent = wrong + [now.timeIntervalSince1970]
            if let wait = RegistrationCodeLimits.retryAfter(spent, limit: limits.guessesPerAddress, window: window, now: now) {
                return .limited(retryAfter: wait)
            }
            return .wrong(triesLeft: limits.guessesPerAddress - spent.count)
        }
    }

    /// Records a registration challenge (the emailed code, spent before, proved the address) and
    /// answers the user handle to offer and the credentials to exclude.
    func offerRegistration(_ c: RegistrationChallenge, now: Date) async throws -> RegistrationOffer {
        try await writer.write { db -> RegistrationOffer in
            try Pruning.challenges(db, now: now)
            var existing: RegisteredUser? = nil
            if let user = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, handle FROM users WHERE email = ?"), arguments: [c.email]) {
                let id: String = user["id"]
                existing = RegisteredUser(
                    id: id, handle: [UInt8](user["handle"] as Data),
                    credentialIDs: try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM passkeys WHERE user_id = ?"), arguments: [id]))
            }
            let handle = existing?.handle ?? c.newHandle
            try db.cachedStatement(
                sql: """
                    INSERT INTO challenges (challenge, purpose, user_id, email, display_name, user_handle, session_id, expires_at)
                    VALUES (?, 'register', ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                c.challenge, existing?.id, c.email, c.displayName, Data(handle), c.sessionID,
                c.expiresAt.timeIntervalSince1970,
            ])
            return RegistrationOffer(handle: handle, excludedCredentialIDs: existing?.credentialIDs ?? [])
        }
    }

    /// Records a sign-in challenge (for `email`'s account, when it has one) and answers that
    /// account's credential IDs, oldest first.
    func offerLogin(challenge: String, email: String?, expiresAt: Date, now: Date) async throws -> [String] {
        try await writer.write { db -> [String] in
            try Pruning.challenges(db, now: now)
            let userID = try email.flatMap { try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM users WHERE email = ?"), arguments: [$0]) }
            try db.execute(
                sql: "INSERT INTO challenges (challenge, purpose, user_id, email, expires_at) VALUES (?, 'login', ?, ?, ?)",
                arguments: [challenge, userID, email, expiresAt.timeIntervalSince1970])
            guard let userID else { return [] }
            return try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM passkeys WHERE user_id = ? ORDER BY created_at"), arguments: [userID])
        }
    }

    /// Records a step-up challenge bound to `actionHash` and answers the user's credential IDs.
    func offerStepUp(challenge: String, userID: String, actionHash: String, expiresAt: Date, now: Date) async throws -> [String] {
        try await writer.write { db -> [String] in
            try Pruning.challenges(db, now: now)
            try db.execute(
                sql: "INSERT INTO challenges (challenge, purpose, user_id, action_hash, expires_at) VALUES (?, 'step_up', ?, ?, ?)",
                arguments: [challenge, userID, actionHash, expiresAt.timeIntervalSince1970])
            return try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM passkeys WHERE user_id = ? ORDER BY created_at"), arguments: [userID])
        }
    }

    /// Marks a challenge used, in a transaction of its own so that it is spent even when the
    /// response that carried it is then refused. Nil when unknown, used or expired.
    func consumeChallenge(_ challenge: String, purpose: ChallengePurpose, now: Date) async throws -> Challenge? {
        let now = now.timeIntervalSince1970
        return try await writer.write { db -> Challenge? in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT user_id, action_hash, email, display_name, user_handle, expires_at, used_at FROM challenges
                            WHERE challenge = ? AND purpose = ?
                            """), arguments: [challenge, purpose.rawValue])
            else { return nil }
            try db.cachedStatement(sql: "UPDATE challenges SET used_at = ? WHERE challenge = ? AND used_at IS NULL").execute(arguments: [now, challenge])
            guard db.changesCount == 1 && (row["expires_at"] as Double) > now else { return nil }
            let handle: Data? = row["user_handle"]
            return Challenge(
                userID: row["user_id"], actionHash: row["action_hash"], email: row["email"],
                displayName: row["display_name"], userHandle: handle.map { [UInt8]($0) })
        }
    }

    /// Registers `passkey`, creating its account when new, and starts `session`, all in one
    /// transaction; `admit` judges the facts first and may refuse by throwing. Answers the user ID
    /// and account.
    func register(
        _ p: NewPasskey, session: NewSession, now: Date,
        admit: @escaping @Sendable (RegistrationFacts) throws -> Void
    ) async throws -> (userID: String, account: Components.Schemas.Account) {
        let notifier = self.notifier
        return try await writer.write { db -> (userID: String, account: Components.Schemas.Account) in
            var existing: RegistrationFacts.Existing? = nil
            if let user = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, handle FROM users WHERE email = ?"), arguments: [p.email]) {
                let userID: String = user["id"]
                let hasPasskey = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM passkeys WHERE user_id = ?"), arguments: [userID]) == true
                existing = .init(userID: userID, handle: [UInt8](user["handle"] as Data), hasPasskey: hasPasskey)
            }
            let taken = try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM passkeys WHERE id = ?"), arguments: [p.credentialID]) == true
            try admit(RegistrationFacts(existing: existing, credentialTaken: taken))
            let account = try Accounts.findOrCreate(
                db, email: p.email, displayName: p.displayName, handle: p.userHandle,
                at: now, actor: "registration")
            try db.cachedStatement(
                sql: """
                    INSERT INTO passkeys (id, user_id, public_key, algorithm, sign_count, transports, created_at)
                    VALUES (?, ?, ?, -7, ?, ?, ?)
                    """
            ).execute(arguments: [
                p.credentialID, account.userID, Data(p.publicKey), Int64(p.signCount),
                p.transports?.joined(separator: ","), now.timeIntervalSince1970,
            ])
            try SandboxDatabase.audit(
                db,
                AuditEntry(
                    at: now, actor: account.userID, action: .passkeyRegistered, subject: account.userID,
                    details: ["credential_id": p.credentialID]))
            // Every passkey added is emailed, to the address registered with. One added to an account
            // that had one already (a new device, or a recovery) is a security alert, on the feed too.
            if existing?.hasPasskey == true {
                try SecurityAlerts.raise(db, .passkeyAdded, userID: account.userID, mailing: p.email, at: now, notifier: notifier, mailer: mailer)
            } else {
                let when = RFC3339.string(from: now)
                mailer.send(
                    db,
                    Mail(
                        to: p.email, subject: "Your Raxx passkey is ready",
                        body: """
                            A passkey was registered for your Raxx account at \(when), with the one-time code we emailed you.

                            If this was not you, tell us by replying to this email.
                            """))
            }
            let apiAccount = try SessionStore.start(db, session, userID: account.userID, now: now)
            return (account.userID, apiAccount)
        }
    }

    /// The user's passkeys, oldest first.
    func passkeys(userID: String) async throws -> [Components.Schemas.Passkey] {
        try await writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, created_at, last_used_at, transports FROM passkeys WHERE user_id = ? ORDER BY created_at, id",
                arguments: [userID]
            ).map { row in
                let used: Double? = row["last_used_at"], transports: String? = row["transports"]
                return Components.Schemas.Passkey(
                    id: row["id"], createdAt: Date(timeIntervalSince1970: row["created_at"]),
                    lastUsedAt: used.map(Date.init(timeIntervalSince1970:)),
                    transports: transports.map { $0.split(separator: ",").map(String.init) })
            }
        }
    }

    /// Removes the user's passkey `id` in one transaction with the grant that approves it (spent),
    /// its audit record, a security alert and an email; never the user's last passkey.
    func removePasskey(id: String, userID: String, grantHash: String, actionHash: String, now: Date) async throws -> PasskeyRemoval {
        let notifier = self.notifier, mailer = self.mailer
        return try await writer.write { db -> PasskeyRemoval in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM passkeys WHERE id = ? AND user_id = ?", arguments: [id, userID]) == true else {
                return .notFound
            }
            guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM passkeys WHERE user_id = ?", arguments: [userID]) ?? 0 > 1 else { return .last }
            guard try StepUpGrants.consume(db, grantHash: grantHash, actionHash: actionHash, userID: userID, now: now) else { return .grantRefused }
            try db.execute(sql: "DELETE FROM passkeys WHERE id = ? AND user_id = ?", arguments: [id, userID])
            try SandboxDatabase.audit(
                db,
                AuditEntry(
                    at: now, actor: userID, action: .passkeyRemoved, subject: userID,
                    details: ["credential_id": id]))
            try SecurityAlerts.raise(db, .passkeyRemoved(credentialID: id), userID: userID, at: now, notifier: notifier, mailer: mailer)
            return .removed
        }
    }

    func passkey(id: String) async throws -> StoredPasskey? {
        try await writer.read { db -> StoredPasskey? in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT passkeys.user_id, passkeys.public_key, passkeys.sign_count, users.handle FROM passkeys
                            JOIN users ON users.id = passkeys.user_id WHERE passkeys.id = ?
                            """), arguments: [id])
            else { return nil }
            return StoredPasskey(
                userID: row["user_id"], publicKey: [UInt8](row["public_key"] as Data),
                signCount: UInt32(truncatingIfNeeded: row["sign_count"] as Int64), userHandle: [UInt8](row["handle"] as Data))
        }
    }

    /// Remembers a passkey's newest signature counter and when it was used.
    func recordAssertion(credentialID: String, signCount: UInt32, now: Date) async throws {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE passkeys SET sign_count = MAX(sign_count, ?), last_used_at = ? WHERE id = ?",
                arguments: [Int64(signCount), now.timeIntervalSince1970, credentialID])
        }
    }

    /// Records a step-up grant (by hash) for `actionHash` (audited).
    func grantStepUp(grantHash: String, userID: String, actionHash: String, expiresAt: Date, now: Date) async throws {
        try await writer.write { db in
            try Pruning.grants(db, now: now)
            try db.execute(
                sql: "INSERT INTO step_up_grants (grant_hash, user_id, action_hash, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [grantHash, userID, actionHash, expiresAt.timeIntervalSince1970])
            try SandboxDatabase.audit(
                db,
                AuditEntry(
                    at: now, actor: userID, action: .stepUpGranted, subject: userID,
                    details: ["action_hash": actionHash]))
        }
    }
}

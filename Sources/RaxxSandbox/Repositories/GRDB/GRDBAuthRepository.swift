import Crypto
import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxWire

/// `HealthRepository` on SQLite.
struct GRDBHealthRepository: HealthRepository {
    let writer: any DatabaseWriter

    func ping() async throws {
        _ = try await writer.read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT 1")) }
    }
}

/// `AuditRepository` on SQLite.
struct GRDBAuditRepository: AuditRepository {
    let writer: any DatabaseWriter

    func record(_ entry: AuditEntry) async throws {
        try await writer.write { db in try SandboxDatabase.audit(db, entry) }
    }
}

/// `AuthRepository` on SQLite: challenges, passkeys, registrations and step-up grants.
struct GRDBAuthRepository: AuthRepository {
    let writer: any DatabaseWriter
    let notifier: EventNotifier
    let mailer: Mailer

    /// How an address is found among the codes: a hash, so the table does not keep it.
    static func emailHash(_ email: String) -> String {
        SHA256.hash(data: Data(("raxx-email-code:" + email).utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func codeHash(_ code: String, emailHash: String) -> String {
        SHA256.hash(data: Data((emailHash + ":" + code).utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// How many wrong tries a code allows.
    static let codeTries = 5

    func sendRegistrationCode(email: String, code: String, expiresAt: Date, now: Date) async throws {
        let mailer = self.mailer
        try await writer.write { db in
            try Pruning.emailCodes(db, now: now)
            let hash = Self.emailHash(email)
            try db.execute(sql: """
                INSERT OR REPLACE INTO email_codes (email_hash, code_hash, tries_left, expires_at, created_at) VALUES (?, ?, ?, ?, ?)
                """, arguments: [hash, Self.codeHash(code, emailHash: hash), Self.codeTries, expiresAt.timeIntervalSince1970,
                                 now.timeIntervalSince1970])
            let minutes = max(Int((expiresAt.timeIntervalSince(now) / 60).rounded()), 1)
            mailer.send(db, Mail(to: email, subject: "Your Raxx registration code", body: """
                Your one-time code to register a passkey with Raxx:

                \(code)

                It works once, for \(minutes) minutes. If you did not ask for it, ignore this email: \
                nobody can add a passkey to your account without it.
                """))
        }
    }

    func spendRegistrationCode(email: String, code: String, now: Date) async throws -> CodeCheck {
        try await writer.write { db -> CodeCheck in
            try Pruning.emailCodes(db, now: now)
            let hash = Self.emailHash(email)
            guard let row = try Row.fetchOne(db, sql: "SELECT code_hash, tries_left FROM email_codes WHERE email_hash = ?", arguments: [hash]) else {
                return .expired
            }
            let stored: String = row["code_hash"]
            if stored == Self.codeHash(code, emailHash: hash) {
                try db.execute(sql: "DELETE FROM email_codes WHERE email_hash = ?", arguments: [hash])
                return db.changesCount == 1 ? .accepted : .expired
            }
            let left = (row["tries_left"] as Int) - 1
            if left <= 0 {
                try db.execute(sql: "DELETE FROM email_codes WHERE email_hash = ?", arguments: [hash])
                return .expired
            }
            try db.execute(sql: "UPDATE email_codes SET tries_left = ? WHERE email_hash = ?", arguments: [left, hash])
            return .wrong(triesLeft: left)
        }
    }

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
            try db.cachedStatement(sql: """
                INSERT INTO challenges (challenge, purpose, user_id, email, display_name, user_handle, session_id, expires_at)
                VALUES (?, 'register', ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [c.challenge, existing?.id, c.email, c.displayName, Data(handle), c.sessionID,
                                 c.expiresAt.timeIntervalSince1970])
            return RegistrationOffer(handle: handle, excludedCredentialIDs: existing?.credentialIDs ?? [])
        }
    }

    func offerLogin(challenge: String, email: String?, expiresAt: Date, now: Date) async throws -> [String] {
        try await writer.write { db -> [String] in
            try Pruning.challenges(db, now: now)
            let userID = try email.flatMap { try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM users WHERE email = ?"), arguments: [$0]) }
            try db.execute(sql: "INSERT INTO challenges (challenge, purpose, user_id, email, expires_at) VALUES (?, 'login', ?, ?, ?)",
                           arguments: [challenge, userID, email, expiresAt.timeIntervalSince1970])
            guard let userID else { return [] }
            return try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM passkeys WHERE user_id = ? ORDER BY created_at"), arguments: [userID])
        }
    }

    func offerStepUp(challenge: String, userID: String, actionHash: String, expiresAt: Date, now: Date) async throws -> [String] {
        try await writer.write { db -> [String] in
            try Pruning.challenges(db, now: now)
            try db.execute(sql: "INSERT INTO challenges (challenge, purpose, user_id, action_hash, expires_at) VALUES (?, 'step_up', ?, ?, ?)",
                           arguments: [challenge, userID, actionHash, expiresAt.timeIntervalSince1970])
            return try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM passkeys WHERE user_id = ? ORDER BY created_at"), arguments: [userID])
        }
    }

    func consumeChallenge(_ challenge: String, purpose: ChallengePurpose, now: Date) async throws -> Challenge? {
        let now = now.timeIntervalSince1970
        return try await writer.write { db -> Challenge? in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT user_id, action_hash, email, display_name, user_handle, expires_at, used_at FROM challenges
                WHERE challenge = ? AND purpose = ?
                """), arguments: [challenge, purpose.rawValue]) else { return nil }
            try db.cachedStatement(sql: "UPDATE challenges SET used_at = ? WHERE challenge = ? AND used_at IS NULL").execute(arguments: [now, challenge])
            guard db.changesCount == 1 && (row["expires_at"] as Double) > now else { return nil }
            let handle: Data? = row["user_handle"]
            return Challenge(userID: row["user_id"], actionHash: row["action_hash"], email: row["email"],
                             displayName: row["display_name"], userHandle: handle.map { [UInt8]($0) })
        }
    }

    func register(_ p: NewPasskey, session: NewSession, now: Date,
                  admit: @escaping @Sendable (RegistrationFacts) throws -> Void) async throws -> (userID: String, account: Components.Schemas.Account)
    {
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
            let account = try Accounts.findOrCreate(db, email: p.email, displayName: p.displayName, handle: p.userHandle,
                                                    at: now, actor: "registration")
            try db.cachedStatement(sql: """
                INSERT INTO passkeys (id, user_id, public_key, algorithm, sign_count, transports, created_at)
                VALUES (?, ?, ?, -7, ?, ?, ?)
                """).execute(arguments: [p.credentialID, account.userID, Data(p.publicKey), Int64(p.signCount),
                                 p.transports?.joined(separator: ","), now.timeIntervalSince1970])
            try SandboxDatabase.audit(db, AuditEntry(at: now, actor: account.userID, action: .passkeyRegistered, subject: account.userID,
                                                     details: ["credential_id": p.credentialID]))
            // A passkey added to an account that had one already: the account hears of it.
            if existing?.hasPasskey == true {
                try EventLog.insert(db, NewEvent(user: account.userID, type: .securityAlert, order: nil,
                                                 title: "A new passkey was added to your account.",
                                                 body: "If this was not you, sign in and remove it, and sign out your other sessions.",
                                                 reason: "passkey_added", at: now), notifier: notifier)
            }
            // Every passkey added is emailed; to an account that had one, as the recovery (or the
            // new device) it is.
            let when = RFC3339.string(from: now)
            mailer.send(db, existing?.hasPasskey == true
                ? Mail(to: p.email, subject: "A passkey was added to your Raxx account", body: """
                    A new passkey was added to your Raxx account at \(when), with the one-time code we emailed \
                    you: a new device, or a recovery after a lost or locked passkey. Your other passkeys still work.

                    If this was not you, sign in with one of them, remove the new passkey (raxx-auth passkeys \
                    remove), and sign out your other sessions.
                    """)
                : Mail(to: p.email, subject: "Your Raxx passkey is ready", body: """
                    A passkey was registered for your Raxx account at \(when), with the one-time code we emailed you.

                    If this was not you, tell us by replying to this email.
                    """))
            let apiAccount = try GRDBSessionRepository.start(db, session, userID: account.userID, now: now)
            return (account.userID, apiAccount)
        }
    }

    func passkeys(userID: String) async throws -> [Components.Schemas.Passkey] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT id, created_at, last_used_at, transports FROM passkeys WHERE user_id = ? ORDER BY created_at, id",
                             arguments: [userID]).map { row in
                let used: Double? = row["last_used_at"], transports: String? = row["transports"]
                return Components.Schemas.Passkey(id: row["id"], createdAt: Date(timeIntervalSince1970: row["created_at"]),
                                                  lastUsedAt: used.map(Date.init(timeIntervalSince1970:)),
                                                  transports: transports.map { $0.split(separator: ",").map(String.init) })
            }
        }
    }

    func removePasskey(id: String, userID: String, grantHash: String, actionHash: String, now: Date) async throws -> PasskeyRemoval {
        let notifier = self.notifier, mailer = self.mailer
        return try await writer.write { db -> PasskeyRemoval in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM passkeys WHERE id = ? AND user_id = ?", arguments: [id, userID]) == true else {
                return .notFound
            }
            guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM passkeys WHERE user_id = ?", arguments: [userID]) ?? 0 > 1 else { return .last }
            guard try StepUpGrants.consume(db, grantHash: grantHash, actionHash: actionHash, userID: userID, now: now) else { return .grantRefused }
            try db.execute(sql: "DELETE FROM passkeys WHERE id = ? AND user_id = ?", arguments: [id, userID])
            try SandboxDatabase.audit(db, AuditEntry(at: now, actor: userID, action: .passkeyRemoved, subject: userID,
                                                     details: ["credential_id": id]))
            try EventLog.insert(db, NewEvent(user: userID, type: .securityAlert, order: nil,
                                             title: "A passkey was removed from your account.",
                                             body: "If this was not you, sign in with another passkey and sign out your other sessions.",
                                             reason: "passkey_removed", at: now), notifier: notifier)
            try mailer.send(db, toUser: userID, subject: "A passkey was removed from your Raxx account", body: """
                A passkey (\(id.prefix(12))…) was removed from your Raxx account at \(RFC3339.string(from: now)), \
                confirmed with another of its passkeys.

                If this was not you, sign in with a passkey you still have and sign out your other sessions.
                """)
            return .removed
        }
    }

    func passkey(id: String) async throws -> StoredPasskey? {
        try await writer.read { db -> StoredPasskey? in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT passkeys.user_id, passkeys.public_key, passkeys.sign_count, users.handle FROM passkeys
                JOIN users ON users.id = passkeys.user_id WHERE passkeys.id = ?
                """), arguments: [id]) else { return nil }
            return StoredPasskey(userID: row["user_id"], publicKey: [UInt8](row["public_key"] as Data),
                                 signCount: UInt32(truncatingIfNeeded: row["sign_count"] as Int64), userHandle: [UInt8](row["handle"] as Data))
        }
    }

    func recordAssertion(credentialID: String, signCount: UInt32, now: Date) async throws {
        try await writer.write { db in
            try db.execute(sql: "UPDATE passkeys SET sign_count = MAX(sign_count, ?), last_used_at = ? WHERE id = ?",
                           arguments: [Int64(signCount), now.timeIntervalSince1970, credentialID])
        }
    }

    func grantStepUp(grantHash: String, userID: String, actionHash: String, expiresAt: Date, now: Date) async throws {
        try await writer.write { db in
            try Pruning.grants(db, now: now)
            try db.execute(sql: "INSERT INTO step_up_grants (grant_hash, user_id, action_hash, expires_at) VALUES (?, ?, ?, ?)",
                           arguments: [grantHash, userID, actionHash, expiresAt.timeIntervalSince1970])
            try SandboxDatabase.audit(db, AuditEntry(at: now, actor: userID, action: .stepUpGranted, subject: userID,
                                                     details: ["action_hash": actionHash]))
        }
    }
}

/// `SessionRepository` on SQLite.
struct GRDBSessionRepository: SessionRepository {
    let writer: any DatabaseWriter
    let notifier: EventNotifier
    let mailer: Mailer

    func lookup(accessTokenHash: String, now: Date) async throws -> SessionLookup {
        let now = now.timeIntervalSince1970
        // The answer is made inside the read: a `Row` is not Sendable, and a closure returning one
        // resolves to GRDB's blocking `read`, which waits for a reader connection on a thread of
        // the cooperative pool (every request passes here: under load, both of this machine's
        // threads waited for readers held by tasks that needed a thread to finish).
        return try await writer.read { db -> SessionLookup in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT sessions.id, sessions.user_id, sessions.access_expires_at, sessions.expires_at, sessions.revoked_at,
                       accounts.id AS account_id, users.staff
                FROM sessions JOIN accounts ON accounts.user_id = sessions.user_id JOIN users ON users.id = sessions.user_id
                WHERE sessions.access_token_hash = ?
                """), arguments: [accessTokenHash]) else {
                return try Self.isClosedAccountToken(db, accessTokenHash, now: now) ? .accountClosed : .unknown
            }
            let revoked: Double? = row["revoked_at"]
            guard revoked == nil else { return .revoked }
            guard (row["access_expires_at"] as Double) > now, (row["expires_at"] as Double) > now else { return .expired }
            return .live(Caller(userID: row["user_id"], accountID: row["account_id"], sessionID: row["id"], staff: (row["staff"] as Int) != 0))
        }
    }

    /// Whether `tokenHash` is a token of an erased account's session (until it would have ended).
    static func isClosedAccountToken(_ db: Database, _ tokenHash: String, now: Double) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM closed_account_tokens WHERE token_hash = ? AND expires_at >= ?"),
                          arguments: [tokenHash, now]) ?? false
    }

    /// Starts `session` inside `db`'s transaction and answers the account it signs in to.
    static func start(_ db: Database, _ session: NewSession, userID: String, now: Date) throws -> Components.Schemas.Account {
        try Pruning.sessions(db, now: now)
        try db.cachedStatement(sql: """
            INSERT INTO sessions (id, user_id, access_token_hash, access_expires_at, renewal_token_hash, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [session.id, userID, session.accessTokenHash, session.accessExpiresAt.timeIntervalSince1970,
                             session.renewalTokenHash, now.timeIntervalSince1970, session.expiresAt.timeIntervalSince1970])
        try SandboxDatabase.audit(db, AuditEntry(at: now, actor: userID, action: .sessionStarted, subject: userID,
                                                 details: ["session_id": session.id, "method": session.method]))
        guard let account = try Accounts.apiAccount(db, userID: userID) else { throw ProblemError.unauthorized }
        return account
    }

    func start(_ session: NewSession, userID: String, now: Date) async throws -> Components.Schemas.Account {
        try await writer.write { db in try Self.start(db, session, userID: userID, now: now) }
    }

    func renew(renewalTokenHash: String, now: Date, tokens: @escaping @Sendable (Date) -> RenewedTokens) async throws -> RenewalOutcome {
        let notifier = self.notifier, mailer = self.mailer
        return try await writer.write { db -> RenewalOutcome in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT id, user_id, expires_at, revoked_at FROM sessions WHERE renewal_token_hash = ?"),
                                             arguments: [renewalTokenHash]) else {
                if let reused = try Self.reuse(db, renewalTokenHash: renewalTokenHash, now: now, notifier: notifier, mailer: mailer) { return reused }
                let closed = try Self.isClosedAccountToken(db, renewalTokenHash, now: now.timeIntervalSince1970)
                try SandboxDatabase.audit(db, AuditEntry(at: now, actor: "anonymous", action: .sessionRenewalRefused, subject: "unknown",
                                                         details: ["reason": closed ? "account_closed" : "unknown_token"]))
                return closed ? .accountClosed : .refused
            }
            let sessionID: String = row["id"], userID: String = row["user_id"]
            let revoked: Double? = row["revoked_at"]
            guard revoked == nil, (row["expires_at"] as Double) > now.timeIntervalSince1970 else {
                try SandboxDatabase.audit(db, AuditEntry(at: now, actor: userID, action: .sessionRenewalRefused, subject: userID,
                                                         details: ["session_id": sessionID, "reason": revoked == nil ? "session_over" : "revoked"]))
                return .refused
            }
            let sessionEnd = Date(timeIntervalSince1970: row["expires_at"])
            let new = tokens(sessionEnd)
            try db.cachedStatement(sql: """
                UPDATE sessions SET access_token_hash = ?, access_expires_at = ?, renewal_token_hash = ? WHERE id = ?
                """).execute(arguments: [new.accessTokenHash, new.accessExpiresAt.timeIntervalSince1970, new.renewalTokenHash, sessionID])
            try db.execute(sql: "INSERT OR IGNORE INTO spent_renewal_tokens (token_hash, session_id, spent_at) VALUES (?, ?, ?)",
                           arguments: [renewalTokenHash, sessionID, now.timeIntervalSince1970])
            guard let account = try Accounts.apiAccount(db, userID: userID) else { throw ProblemError.unauthorized }
            return .renewed(sessionExpiresAt: sessionEnd, account: account)
        }
    }

    /// A spent renewal token presented again, inside `db`'s transaction: nil when the token was
    /// never spent. Otherwise the token's session is revoked (if still live) with a security alert
    /// for its user, and the refusal is audited; all of it commits with the refusal.
    static func reuse(_ db: Database, renewalTokenHash: String, now: Date, notifier: EventNotifier, mailer: Mailer) throws -> RenewalOutcome? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT sessions.id, sessions.user_id, sessions.revoked_at FROM spent_renewal_tokens
            JOIN sessions ON sessions.id = spent_renewal_tokens.session_id WHERE spent_renewal_tokens.token_hash = ?
            """), arguments: [renewalTokenHash]) else { return nil }
        let sessionID: String = row["id"], userID: String = row["user_id"]
        let revoked: Double? = row["revoked_at"]
        if revoked == nil {
            try db.cachedStatement(sql: "UPDATE sessions SET revoked_at = ? WHERE id = ?").execute(arguments: [now.timeIntervalSince1970, sessionID])
            try SandboxDatabase.audit(db, AuditEntry(at: now, actor: "system", action: .sessionRevoked, subject: userID,
                                                     details: ["session_id": sessionID, "reason": "renewal_reused"]))
            try EventLog.insert(db, NewEvent(user: userID, type: .securityAlert, order: nil,
                                             title: "A session was signed out to protect your account.",
                                             body: "A renewal token was used twice, so someone may hold a copy of it. Sign in again.",
                                             reason: "renewal_token_reused", at: now), notifier: notifier)
            try mailer.send(db, toUser: userID, subject: "A Raxx session was signed out to protect your account", body: """
                At \(RFC3339.string(from: now)) a renewal token of one of your sessions was presented a second time, \
                so someone may hold a copy of it. That session is signed out; your passkeys are untouched.

                Sign in again on the device you use. If it keeps happening, check that device for software you do not know.
                """)
        }
        try SandboxDatabase.audit(db, AuditEntry(at: now, actor: "anonymous", action: .sessionRenewalRefused, subject: userID,
                                                 details: ["session_id": sessionID, "reason": "renewal_reused"]))
        return .reused
    }

    func revoke(sessionID: String, userID: String, now: Date) async throws {
        try await writer.write { db in
            try db.cachedStatement(sql: "UPDATE sessions SET revoked_at = ? WHERE id = ?").execute(arguments: [now.timeIntervalSince1970, sessionID])
            try SandboxDatabase.audit(db, AuditEntry(at: now, actor: userID, action: .sessionRevoked, subject: userID,
                                                     details: ["session_id": sessionID]))
        }
    }

    func session(id: String, userID: String) async throws -> (SessionTimes, Components.Schemas.Account)? {
        try await writer.read { db -> (SessionTimes, Components.Schemas.Account)? in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT created_at, access_expires_at, expires_at FROM sessions WHERE id = ?"),
                                             arguments: [id]),
                  let account = try Accounts.apiAccount(db, userID: userID) else { return nil }
            return (SessionTimes(createdAt: Date(timeIntervalSince1970: row["created_at"]),
                                 accessExpiresAt: Date(timeIntervalSince1970: row["access_expires_at"]),
                                 expiresAt: Date(timeIntervalSince1970: row["expires_at"])), account)
        }
    }
}

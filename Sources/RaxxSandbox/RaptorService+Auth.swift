import Crypto
import Foundation
import GRDB
import RaxxAPI
import RaxxCore

/// Passkey registration and sign-in, sessions (renewal, revocation) and step-up.
extension RaptorService {
    static let challengeLifetime: TimeInterval = 300
    static let stepUpGrantLifetime: TimeInterval = 120

    var verifier: WebAuthnVerifier { WebAuthnVerifier(rpID: configuration.relyingPartyID, origin: configuration.origin) }

    static func randomToken() -> String {
        var g = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in g.next() as UInt8 })
    }

    static func normalizedEmail(_ text: String) throws -> String {
        let email = text.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !email.contains(where: \.isWhitespace), email.count <= 254 else {
            throw ProblemError.badRequest("'\(text)' is not an email address.")
        }
        return email
    }

    static func bytes(_ text: String, field: String) throws -> [UInt8] {
        guard let bytes = Base64URL.decode(text) else { throw ProblemError.badRequest("Field '\(field)' is not base64url.") }
        return bytes
    }

    // MARK: Challenges

    struct Challenge {
        var userID: String?
        var actionHash: String?
        var email: String?
        var displayName: String?
        var userHandle: [UInt8]?
        var sessionID: String?
    }

    /// Marks `challenge` used, in a transaction of its own so that it is spent even when the
    /// response that carried it is then refused: a challenge is good for one try.
    func consumeChallenge(_ challenge: String, purpose: String) async throws -> Challenge {
        let now = clock().timeIntervalSince1970
        let row = try await database.writer.write { db -> Row? in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT user_id, action_hash, email, display_name, user_handle, session_id, expires_at, used_at FROM challenges
                WHERE challenge = ? AND purpose = ?
                """, arguments: [challenge, purpose]) else { return nil }
            try db.execute(sql: "UPDATE challenges SET used_at = ? WHERE challenge = ? AND used_at IS NULL", arguments: [now, challenge])
            return db.changesCount == 1 && (row["expires_at"] as Double) > now ? row : nil
        }
        guard let row else {
            throw ProblemError(400, code: "challenge_invalid", title: "The challenge is unknown, used or expired.",
                               detail: "Start again: ask for new options.")
        }
        let handle: Data? = row["user_handle"]
        return Challenge(userID: row["user_id"], actionHash: row["action_hash"], email: row["email"],
                         displayName: row["display_name"], userHandle: handle.map { [UInt8]($0) }, sessionID: row["session_id"])
    }

    func audit(actor: String, action: String, subject: String, details: [String: String] = [:]) async {
        let now = clock()
        _ = try? await database.writer.write { db in
            try SandboxDatabase.audit(db, at: now, actor: actor, action: action, subject: subject, details: details)
        }
    }

    // MARK: Sessions

    /// Starts a session for `userID` inside `db`'s transaction and answers its grant.
    func startSession(_ db: Database, userID: String, now: Date, reason: String) throws -> Components.Schemas.SessionGrant {
        let sessionID = Identifier.make("ses")
        let access = Self.randomToken(), renewal = Self.randomToken()
        let sessionEnd = now.addingTimeInterval(configuration.sessionTTL.seconds)
        let accessEnd = min(now.addingTimeInterval(configuration.accessTokenTTL.seconds), sessionEnd)
        try db.execute(sql: """
            INSERT INTO sessions (id, user_id, access_token_hash, access_expires_at, renewal_token_hash, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [sessionID, userID, Self.tokenHash(access), accessEnd.timeIntervalSince1970, Self.tokenHash(renewal),
                             now.timeIntervalSince1970, sessionEnd.timeIntervalSince1970])
        try SandboxDatabase.audit(db, at: now, actor: userID, action: "session.started", subject: userID,
                                  details: ["session_id": sessionID, "method": reason])
        return .init(accessToken: access, tokenType: .bearer, expiresAt: accessEnd, renewalToken: renewal,
                     sessionExpiresAt: sessionEnd, account: try account(db, userID: userID))
    }

    func account(_ db: Database, userID: String) throws -> Components.Schemas.Account {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT accounts.id, users.email, accounts.mode, users.staff FROM users JOIN accounts ON accounts.user_id = users.id
            WHERE users.id = ?
            """, arguments: [userID]) else { throw ProblemError.unauthorized }
        return .init(id: row["id"], email: row["email"], mode: Components.Schemas.TradingMode(rawValue: row["mode"]) ?? .paper,
                     staff: (row["staff"] as Int) != 0)
    }

    // MARK: Registration

    public func registerOptions(_ input: Operations.RegisterOptions.Input) async throws -> Operations.RegisterOptions.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let email = try Self.normalizedEmail(body.email)
        let caller = RequestIdentity.bearerToken == nil ? nil : try await authenticate()
        let now = clock()
        let challenge = Self.randomToken()
        let (handle, existing) = try await database.writer.write { db -> ([UInt8], [String]) in
            let user = try Row.fetchOne(db, sql: "SELECT id, handle FROM users WHERE email = ?", arguments: [email])
            var handle = newUserHandle()
            var existing: [String] = []
            if let user {
                handle = [UInt8](user["handle"] as Data)
                existing = try String.fetchAll(db, sql: "SELECT id FROM passkeys WHERE user_id = ?", arguments: [user["id"] as String])
                // An account that has a passkey adds another only from a session of its own.
                if !existing.isEmpty && caller?.userID != (user["id"] as String) {
                    throw ProblemError(409, code: "account_exists", title: "This account already has a passkey.",
                                       detail: "Sign in with it (raxx-auth login) to add another.")
                }
            }
            try db.execute(sql: """
                INSERT INTO challenges (challenge, purpose, user_id, email, display_name, user_handle, session_id, expires_at)
                VALUES (?, 'register', ?, ?, ?, ?, ?, ?)
                """, arguments: [challenge, user?["id"] as String?, email, body.displayName, Data(handle), caller?.sessionID,
                                 now.addingTimeInterval(Self.challengeLifetime).timeIntervalSince1970])
            return (handle, existing)
        }
        return .ok(.init(body: .json(.init(
            rp: .init(id: configuration.relyingPartyID, name: "Raxx"),
            user: .init(id: Base64URL.encode(handle), name: email, displayName: body.displayName ?? email),
            challenge: challenge,
            pubKeyCredParams: [.init(_type: .publicKey, alg: -7)],
            timeout: Int(Self.challengeLifetime * 1000),
            excludeCredentials: existing.map { .init(_type: .publicKey, id: $0) },
            authenticatorSelection: .init(residentKey: .preferred, requireResidentKey: false, userVerification: .required),
            attestation: Components.Schemas.PublicKeyCredentialCreationOptionsJSON.AttestationPayload.none
        ))))
    }

    public func registerVerify(_ input: Operations.RegisterVerify.Input) async throws -> Operations.RegisterVerify.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let clientDataBytes = try Self.bytes(body.response.clientDataJSON, field: "response.clientDataJSON")
        let clientData = try verifier.clientData(clientDataBytes, type: "webauthn.create")
        let challenge = try await consumeChallenge(clientData.challenge, purpose: "register")
        guard let email = challenge.email, let handle = challenge.userHandle else { throw ProblemError.internalError }
        let credential: WebAuthnVerifier.NewCredential
        do {
            credential = try verifier.verifyRegistration(
                attestationObject: try Self.bytes(body.response.attestationObject, field: "response.attestationObject"),
                requireUserVerification: true)
            guard Base64URL.encode(credential.id) == body.id, body.rawId == body.id else {
                throw ProblemError.badRequest("The credential ID does not match the attestation.")
            }
        } catch let problem as ProblemError {
            await audit(actor: email, action: "passkey.registration_refused", subject: challenge.userID ?? email, details: ["reason": problem.code])
            throw problem
        }
        let now = clock()
        let grant = try await database.writer.write { db -> Components.Schemas.SessionGrant in
            // The account may have changed since the options were issued: it must still be the one
            // offered (same user handle), and one that has a passkey takes another only from its
            // own live session.
            if let user = try Row.fetchOne(db, sql: "SELECT id, handle FROM users WHERE email = ?", arguments: [email]) {
                let userID: String = user["id"]
                guard [UInt8](user["handle"] as Data) == handle else {
                    throw ProblemError(409, code: "account_exists", title: "This account was registered meanwhile.",
                                       detail: "Sign in with its passkey (raxx-auth login) to add another.")
                }
                let hasPasskey = try Bool.fetchOne(db, sql: "SELECT 1 FROM passkeys WHERE user_id = ?", arguments: [userID]) == true
                let fromOwnSession = try challenge.sessionID.map {
                    try Bool.fetchOne(db, sql: "SELECT 1 FROM sessions WHERE id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ?",
                                      arguments: [$0, userID, now.timeIntervalSince1970]) == true
                } ?? false
                if hasPasskey && !fromOwnSession {
                    throw ProblemError(409, code: "account_exists", title: "This account already has a passkey.",
                                       detail: "Sign in with it (raxx-auth login) to add another.")
                }
            }
            let account = try Accounts.findOrCreate(db, email: email, displayName: challenge.displayName, handle: handle,
                                                    at: now, actor: "registration")
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM passkeys WHERE id = ?", arguments: [body.id]) == true {
                throw ProblemError(409, code: "conflict", title: "This passkey is already registered.")
            }
            try db.execute(sql: """
                INSERT INTO passkeys (id, user_id, public_key, algorithm, sign_count, transports, created_at)
                VALUES (?, ?, ?, -7, ?, ?, ?)
                """, arguments: [body.id, account.userID, Data(credential.publicKey), Int64(credential.signCount),
                                 body.response.transports?.joined(separator: ","), now.timeIntervalSince1970])
            try SandboxDatabase.audit(db, at: now, actor: account.userID, action: "passkey.registered", subject: account.userID,
                                      details: ["credential_id": body.id])
            return try startSession(db, userID: account.userID, now: now, reason: "registration")
        }
        return .ok(.init(body: .json(grant)))
    }

    // MARK: Sign-in

    func requestOptions(challenge: String, credentialIDs: [String]) -> Components.Schemas.PublicKeyCredentialRequestOptionsJSON {
        .init(challenge: challenge, timeout: Int(Self.challengeLifetime * 1000), rpId: configuration.relyingPartyID,
              allowCredentials: credentialIDs.map { .init(_type: .publicKey, id: $0) }, userVerification: .required)
    }

    public func loginOptions(_ input: Operations.LoginOptions.Input) async throws -> Operations.LoginOptions.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let email = try body.email.map(Self.normalizedEmail)
        let now = clock()
        let challenge = Self.randomToken()
        let credentialIDs = try await database.writer.write { db -> [String] in
            // An unknown email gets options too (with no credentials), so answers do not reveal who has an account.
            let userID = try email.flatMap { try String.fetchOne(db, sql: "SELECT id FROM users WHERE email = ?", arguments: [$0]) }
            try db.execute(sql: "INSERT INTO challenges (challenge, purpose, user_id, email, expires_at) VALUES (?, 'login', ?, ?, ?)",
                           arguments: [challenge, userID, email, now.addingTimeInterval(Self.challengeLifetime).timeIntervalSince1970])
            guard let userID else { return [] }
            return try String.fetchAll(db, sql: "SELECT id FROM passkeys WHERE user_id = ? ORDER BY created_at", arguments: [userID])
        }
        return .ok(.init(body: .json(requestOptions(challenge: challenge, credentialIDs: credentialIDs))))
    }

    /// Verifies an assertion for `purpose`; answers the user it signs in and the challenge.
    func verifyAssertion(_ body: Components.Schemas.AuthenticationResponseJSON, purpose: String) async throws -> (userID: String, challenge: Challenge) {
        let clientDataBytes = try Self.bytes(body.response.clientDataJSON, field: "response.clientDataJSON")
        let clientData = try verifier.clientData(clientDataBytes, type: "webauthn.get")
        let challenge = try await consumeChallenge(clientData.challenge, purpose: purpose)
        let row = try await database.writer.read { db in
            try Row.fetchOne(db, sql: """
                SELECT passkeys.user_id, passkeys.public_key, passkeys.sign_count, users.handle FROM passkeys
                JOIN users ON users.id = passkeys.user_id WHERE passkeys.id = ?
                """, arguments: [body.id])
        }
        guard let row, challenge.userID == nil || challenge.userID == (row["user_id"] as String) else {
            throw ProblemError(400, code: "credential_unknown", title: "This passkey is not registered for the account.")
        }
        let userID: String = row["user_id"]
        if let handle = body.response.userHandle, Self.bytes(handle) != [UInt8](row["handle"] as Data) {
            throw ProblemError(400, code: "credential_unknown", title: "The user handle does not match the passkey.")
        }
        guard let publicKey = try? P256.Signing.PublicKey(x963Representation: [UInt8](row["public_key"] as Data)) else {
            throw ProblemError.internalError
        }
        let newCount = try verifier.verifyAssertion(
            clientDataJSON: clientDataBytes,
            authenticatorData: try Self.bytes(body.response.authenticatorData, field: "response.authenticatorData"),
            signature: try Self.bytes(body.response.signature, field: "response.signature"),
            publicKey: publicKey, storedSignCount: UInt32(truncatingIfNeeded: row["sign_count"] as Int64),
            requireUserVerification: true)
        let now = clock().timeIntervalSince1970
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE passkeys SET sign_count = MAX(sign_count, ?), last_used_at = ? WHERE id = ?",
                           arguments: [Int64(newCount), now, body.id])
        }
        return (userID, challenge)
    }

    static func bytes(_ text: String) -> [UInt8]? { Base64URL.decode(text) }

    public func loginVerify(_ input: Operations.LoginVerify.Input) async throws -> Operations.LoginVerify.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let userID: String
        do {
            userID = try await verifyAssertion(body, purpose: "login").userID
        } catch let problem as ProblemError {
            await audit(actor: "anonymous", action: "sign_in.refused", subject: body.id, details: ["reason": problem.code])
            throw problem
        }
        let now = clock()
        let grant = try await database.writer.write { db in try startSession(db, userID: userID, now: now, reason: "passkey") }
        return .ok(.init(body: .json(grant)))
    }

    // MARK: Renewal, sign-out, session

    public func renewSession(_ input: Operations.RenewSession.Input) async throws -> Operations.RenewSession.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let now = clock()
        let result = try await database.writer.write { db -> Result<Components.Schemas.SessionGrant, ProblemError> in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, user_id, expires_at, revoked_at FROM sessions WHERE renewal_token_hash = ?",
                                             arguments: [Self.tokenHash(body.renewalToken)]) else {
                try SandboxDatabase.audit(db, at: now, actor: "anonymous", action: "session.renewal_refused", subject: "unknown",
                                          details: ["reason": "unknown_token"])
                return .failure(.sessionExpired)
            }
            let sessionID: String = row["id"], userID: String = row["user_id"]
            let revoked: Double? = row["revoked_at"]
            guard revoked == nil, (row["expires_at"] as Double) > now.timeIntervalSince1970 else {
                try SandboxDatabase.audit(db, at: now, actor: userID, action: "session.renewal_refused", subject: userID,
                                          details: ["session_id": sessionID, "reason": revoked == nil ? "session_over" : "revoked"])
                return .failure(.sessionExpired)
            }
            let sessionEnd = Date(timeIntervalSince1970: row["expires_at"])
            let access = Self.randomToken(), renewal = Self.randomToken()
            let accessEnd = min(now.addingTimeInterval(configuration.accessTokenTTL.seconds), sessionEnd)
            try db.execute(sql: """
                UPDATE sessions SET access_token_hash = ?, access_expires_at = ?, renewal_token_hash = ? WHERE id = ?
                """, arguments: [Self.tokenHash(access), accessEnd.timeIntervalSince1970, Self.tokenHash(renewal), sessionID])
            return .success(.init(accessToken: access, tokenType: .bearer, expiresAt: accessEnd, renewalToken: renewal,
                                  sessionExpiresAt: sessionEnd, account: try account(db, userID: userID)))
        }
        return .ok(.init(body: .json(try result.get())))
    }

    public func logout(_ input: Operations.Logout.Input) async throws -> Operations.Logout.Output {
        let caller = try await authenticate()
        let now = clock()
        try await database.writer.write { db in
            try db.execute(sql: "UPDATE sessions SET revoked_at = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, caller.sessionID])
            try SandboxDatabase.audit(db, at: now, actor: caller.userID, action: "session.revoked", subject: caller.userID,
                                      details: ["session_id": caller.sessionID])
        }
        return .noContent(.init())
    }

    public func getSession(_ input: Operations.GetSession.Input) async throws -> Operations.GetSession.Output {
        let caller = try await authenticate()
        let session = try await database.writer.read { db -> Components.Schemas.Session in
            guard let row = try Row.fetchOne(db, sql: "SELECT created_at, access_expires_at, expires_at FROM sessions WHERE id = ?",
                                             arguments: [caller.sessionID]) else { throw ProblemError.unauthorized }
            return .init(account: try account(db, userID: caller.userID),
                         createdAt: Date(timeIntervalSince1970: row["created_at"]),
                         expiresAt: Date(timeIntervalSince1970: row["access_expires_at"]),
                         sessionExpiresAt: Date(timeIntervalSince1970: row["expires_at"]))
        }
        return .ok(.init(body: .json(session)))
    }

    // MARK: Step-up

    public func stepUpOptions(_ input: Operations.StepUpOptions.Input) async throws -> Operations.StepUpOptions.Output {
        let caller = try await authenticate()
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let now = clock()
        let challenge = Self.randomToken()
        let credentialIDs = try await database.writer.write { db -> [String] in
            try db.execute(sql: "INSERT INTO challenges (challenge, purpose, user_id, action_hash, expires_at) VALUES (?, 'step_up', ?, ?, ?)",
                           arguments: [challenge, caller.userID, body.actionHash, now.addingTimeInterval(Self.challengeLifetime).timeIntervalSince1970])
            return try String.fetchAll(db, sql: "SELECT id FROM passkeys WHERE user_id = ? ORDER BY created_at", arguments: [caller.userID])
        }
        return .ok(.init(body: .json(requestOptions(challenge: challenge, credentialIDs: credentialIDs))))
    }

    public func stepUpVerify(_ input: Operations.StepUpVerify.Input) async throws -> Operations.StepUpVerify.Output {
        let caller = try await authenticate()
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let verified: (userID: String, challenge: Challenge)
        do {
            verified = try await verifyAssertion(body, purpose: "step_up")
            guard verified.userID == caller.userID, verified.challenge.userID == caller.userID, verified.challenge.actionHash != nil else {
                throw ProblemError(403, code: "step_up_invalid", title: "The step-up does not belong to this session.")
            }
        } catch let problem as ProblemError {
            await audit(actor: caller.userID, action: "step_up.refused", subject: caller.userID, details: ["reason": problem.code])
            throw problem
        }
        let actionHash = verified.challenge.actionHash ?? ""
        let grant = Self.randomToken()
        let now = clock()
        let expires = now.addingTimeInterval(Self.stepUpGrantLifetime)
        try await database.writer.write { db in
            try db.execute(sql: "INSERT INTO step_up_grants (grant_hash, user_id, action_hash, expires_at) VALUES (?, ?, ?, ?)",
                           arguments: [Self.tokenHash(grant), caller.userID, actionHash, expires.timeIntervalSince1970])
            try SandboxDatabase.audit(db, at: now, actor: caller.userID, action: "step_up.granted", subject: caller.userID,
                                      details: ["action_hash": actionHash])
        }
        return .ok(.init(body: .json(.init(grant: grant, actionHash: actionHash, expiresAt: expires))))
    }

    /// Spends a step-up grant for `actionHash` inside `db`'s transaction: single use, this account
    /// and this action only, before it expires.
    func consumeStepUpGrant(_ db: Database, grant: String, actionHash: String, userID: String, now: Date) throws -> Bool {
        try db.execute(sql: """
            UPDATE step_up_grants SET used_at = ? WHERE grant_hash = ? AND user_id = ? AND action_hash = ?
            AND used_at IS NULL AND expires_at > ?
            """, arguments: [now.timeIntervalSince1970, Self.tokenHash(grant), userID, actionHash, now.timeIntervalSince1970])
        return db.changesCount == 1
    }
}

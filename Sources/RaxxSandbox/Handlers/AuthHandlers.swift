import Crypto
import Foundation
import RaxxAPI
import RaxxCore

/// The `auth` tag: passkey registration and sign-in, and step-up.
struct AuthHandlers: Sendable {
    let auth: any AuthRepository
    let sessions: any SessionRepository
    let audit: any AuditRepository
    let configuration: SandboxConfiguration
    let clock: @Sendable () -> Date

    static let challengeLifetime: TimeInterval = 300
    static let stepUpGrantLifetime: TimeInterval = 120

    var verifier: WebAuthnVerifier { WebAuthnVerifier(rpID: configuration.relyingPartyID, origin: configuration.origin) }
    var mint: SessionMint { SessionMint(configuration: configuration) }

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

    /// Records an audit event; a failure to record one does not change the answer.
    func record(actor: String, action: String, subject: String, details: [String: String] = [:]) async {
        try? await audit.record(AuditEntry(at: clock(), actor: actor, action: action, subject: subject, details: details))
    }

    /// Spends `challenge`, or answers 400 `challenge_invalid`.
    func consumeChallenge(_ challenge: String, purpose: ChallengePurpose) async throws -> Challenge {
        guard let spent = try await auth.consumeChallenge(challenge, purpose: purpose, now: clock()) else {
            throw ProblemError(400, code: "challenge_invalid", title: "The challenge is unknown, used or expired.",
                               detail: "Start again: ask for new options.")
        }
        return spent
    }

    // MARK: Registration

    /// `caller` is looked up only once the body is known to be good (a registration may come
    /// from a session of the account it adds a passkey to).
    func registerOptions(_ input: Operations.RegisterOptions.Input, caller: () async throws -> Caller?) async throws
        -> Operations.RegisterOptions.Output
    {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let email = try Self.normalizedEmail(body.email)
        if let name = body.displayName, name.unicodeScalars.count > 64 {
            throw ProblemError.badRequest("Field 'display_name' must be at most 64 characters.")
        }
        let caller = try await caller()
        let challenge = Tokens.random()
        let now = clock()
        let offer = try await auth.offerRegistration(
            RegistrationChallenge(challenge: challenge, email: email, displayName: body.displayName, newHandle: newUserHandle(),
                                  sessionID: caller?.sessionID, expiresAt: now.addingTimeInterval(Self.challengeLifetime)),
            now: now
        ) { existing in
            // An account that has a passkey adds another only from a session of its own.
            if let existing, !existing.credentialIDs.isEmpty, caller?.userID != existing.id {
                throw ProblemError(409, code: "account_exists", title: "This account already has a passkey.",
                                   detail: "Sign in with it (raxx-auth login) to add another.")
            }
        }
        return .ok(.init(body: .json(.init(
            rp: .init(id: configuration.relyingPartyID, name: "Raxx"),
            user: .init(id: Base64URL.encode(offer.handle), name: email, displayName: body.displayName ?? email),
            challenge: challenge,
            pubKeyCredParams: [.init(_type: .publicKey, alg: -7)],
            timeout: Int(Self.challengeLifetime * 1000),
            excludeCredentials: offer.excludedCredentialIDs.map { .init(_type: .publicKey, id: $0) },
            authenticatorSelection: .init(residentKey: .preferred, requireResidentKey: false, userVerification: .required),
            attestation: Components.Schemas.PublicKeyCredentialCreationOptionsJSON.AttestationPayload.none
        ))))
    }

    func registerVerify(_ input: Operations.RegisterVerify.Input) async throws -> Operations.RegisterVerify.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let clientDataBytes = try Self.bytes(body.response.clientDataJSON, field: "response.clientDataJSON")
        let clientData = try verifier.clientData(clientDataBytes, type: "webauthn.create")
        let challenge = try await consumeChallenge(clientData.challenge, purpose: .register)
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
            await record(actor: email, action: "passkey.registration_refused", subject: challenge.userID ?? email, details: ["reason": problem.code])
            throw problem
        }
        let now = clock()
        let minted = mint.mint(now: now, method: "registration")
        let passkey = NewPasskey(credentialID: body.id, email: email, displayName: challenge.displayName, userHandle: handle,
                                 publicKey: credential.publicKey, signCount: credential.signCount, transports: body.response.transports,
                                 challengeSessionID: challenge.sessionID)
        let registered = try await auth.register(passkey, session: minted.session, now: now) { facts in
            // The account may have changed since the options were issued: it must still be the one
            // offered (same user handle), and one that has a passkey takes another only from its
            // own live session.
            if let existing = facts.existing {
                guard existing.handle == handle else {
                    throw ProblemError(409, code: "account_exists", title: "This account was registered meanwhile.",
                                       detail: "Sign in with its passkey (raxx-auth login) to add another.")
                }
                if existing.hasPasskey && !existing.fromOwnSession {
                    throw ProblemError(409, code: "account_exists", title: "This account already has a passkey.",
                                       detail: "Sign in with it (raxx-auth login) to add another.")
                }
            }
            if facts.credentialTaken {
                throw ProblemError(409, code: "conflict", title: "This passkey is already registered.")
            }
        }
        return .ok(.init(body: .json(mint.grant(minted, account: registered.account))))
    }

    // MARK: Sign-in

    func requestOptions(challenge: String, credentialIDs: [String]) -> Components.Schemas.PublicKeyCredentialRequestOptionsJSON {
        .init(challenge: challenge, timeout: Int(Self.challengeLifetime * 1000), rpId: configuration.relyingPartyID,
              allowCredentials: credentialIDs.map { .init(_type: .publicKey, id: $0) }, userVerification: .required)
    }

    func loginOptions(_ input: Operations.LoginOptions.Input) async throws -> Operations.LoginOptions.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let email = try body.email.map(Self.normalizedEmail)
        let challenge = Tokens.random()
        // An unknown email gets options too (with no credentials), so answers do not reveal who has an account.
        let now = clock()
        let credentialIDs = try await auth.offerLogin(challenge: challenge, email: email,
                                                      expiresAt: now.addingTimeInterval(Self.challengeLifetime), now: now)
        return .ok(.init(body: .json(requestOptions(challenge: challenge, credentialIDs: credentialIDs))))
    }

    /// Verifies an assertion for `purpose`; answers the user it signs in and the challenge.
    func verifyAssertion(_ body: Components.Schemas.AuthenticationResponseJSON, purpose: ChallengePurpose) async throws
        -> (userID: String, challenge: Challenge)
    {
        let clientDataBytes = try Self.bytes(body.response.clientDataJSON, field: "response.clientDataJSON")
        let clientData = try verifier.clientData(clientDataBytes, type: "webauthn.get")
        let challenge = try await consumeChallenge(clientData.challenge, purpose: purpose)
        let stored = try await auth.passkey(id: body.id)
        guard let stored, challenge.userID == nil || challenge.userID == stored.userID else {
            throw ProblemError(400, code: "credential_unknown", title: "This passkey is not registered for the account.")
        }
        if let handle = body.response.userHandle, Base64URL.decode(handle) != stored.userHandle {
            throw ProblemError(400, code: "credential_unknown", title: "The user handle does not match the passkey.")
        }
        guard let publicKey = try? P256.Signing.PublicKey(x963Representation: stored.publicKey) else {
            throw ProblemError.internalError
        }
        let newCount = try verifier.verifyAssertion(
            clientDataJSON: clientDataBytes,
            authenticatorData: try Self.bytes(body.response.authenticatorData, field: "response.authenticatorData"),
            signature: try Self.bytes(body.response.signature, field: "response.signature"),
            publicKey: publicKey, storedSignCount: stored.signCount,
            requireUserVerification: true)
        try await auth.recordAssertion(credentialID: body.id, signCount: newCount, now: clock())
        return (stored.userID, challenge)
    }

    func loginVerify(_ input: Operations.LoginVerify.Input) async throws -> Operations.LoginVerify.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let userID: String
        do {
            userID = try await verifyAssertion(body, purpose: .login).userID
        } catch let problem as ProblemError {
            await record(actor: "anonymous", action: "sign_in.refused", subject: body.id, details: ["reason": problem.code])
            throw problem
        }
        let now = clock()
        let minted = mint.mint(now: now, method: "passkey")
        let account = try await sessions.start(minted.session, userID: userID, now: now)
        return .ok(.init(body: .json(mint.grant(minted, account: account))))
    }

    // MARK: Step-up

    func stepUpOptions(_ input: Operations.StepUpOptions.Input, caller: Caller) async throws -> Operations.StepUpOptions.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let challenge = Tokens.random()
        let now = clock()
        let credentialIDs = try await auth.offerStepUp(challenge: challenge, userID: caller.userID, actionHash: body.actionHash,
                                                       expiresAt: now.addingTimeInterval(Self.challengeLifetime), now: now)
        return .ok(.init(body: .json(requestOptions(challenge: challenge, credentialIDs: credentialIDs))))
    }

    func stepUpVerify(_ input: Operations.StepUpVerify.Input, caller: Caller) async throws -> Operations.StepUpVerify.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let verified: (userID: String, challenge: Challenge)
        do {
            verified = try await verifyAssertion(body, purpose: .stepUp)
            guard verified.userID == caller.userID, verified.challenge.userID == caller.userID, verified.challenge.actionHash != nil else {
                throw ProblemError(403, code: "step_up_invalid", title: "The step-up does not belong to this session.")
            }
        } catch let problem as ProblemError {
            await record(actor: caller.userID, action: "step_up.refused", subject: caller.userID, details: ["reason": problem.code])
            throw problem
        }
        let actionHash = verified.challenge.actionHash ?? ""
        let grant = Tokens.random()
        let now = clock()
        let expires = now.addingTimeInterval(Self.stepUpGrantLifetime)
        try await auth.grantStepUp(grantHash: Tokens.hash(grant), userID: caller.userID, actionHash: actionHash, expiresAt: expires, now: now)
        return .ok(.init(body: .json(.init(grant: grant, actionHash: actionHash, expiresAt: expires))))
    }
}

import Crypto
import Foundation
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWebAuthn

/// The `auth` tag: passkey registration and sign-in, and step-up.
struct AuthHandlers: Sendable {
    let auth: AuthStore
    let sessions: SessionStore
    let audit: AuditStore
    let configuration: SandboxConfiguration
    let clock: @Sendable () -> Date
    /// The asks for a code, and the codes presented, of each client in the last minute.
    let askBudget = ClientBudget()
    let guessBudget = ClientBudget()

    static let challengeLifetime: TimeInterval = 300
    static let stepUpGrantLifetime: TimeInterval = 120
    /// How long an emailed registration code works, and how many digits it has.
    static let codeLifetime: TimeInterval = 600
    static let codeDigits = 8

    /// A wait as a person reads it, exactly (`6m57s`).
    static func wait(_ seconds: Int) -> String { RaxxDuration.seconds(Int64(seconds)).description }

    /// A new one-time code: `codeDigits` random digits.
    static func newCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let number = UInt64.random(in: 0..<100_000_000, using: &generator)
        let digits = String(number)
        return String(repeating: "0", count: codeDigits - digits.count) + digits
    }

    var verifier: WebAuthnVerifier { WebAuthnVerifier(rpID: configuration.relyingPartyID, origin: configuration.origin) }

    /// `body`, its refusal as the problem answered (400, with the refusal's code).
    static func checked<T>(_ body: () throws(WebAuthnRefusal) -> T) throws(ProblemError) -> T {
        do {
            return try body()
        } catch {
            throw ProblemError(400, code: error.code, title: "The passkey response was refused.", detail: error.detail)
        }
    }
    var mint: SessionMint { SessionMint(configuration: configuration) }

    /// `text` as an address the platform mails (`EmailAddress`), or 400 naming the field. The
    /// refused text is not echoed: it may be a megabyte, or carry control characters.
    static func normalizedEmail(_ text: String, field: String = "email") throws(ProblemError) -> String {
        do {
            return try EmailAddress.normalized(text)
        } catch {
            throw ProblemError.badRequest("Field '\(field)' \(error).")
        }
    }

    static func bytes(_ text: String, field: String) throws -> [UInt8] {
        guard let bytes = Base64URL.decode(text) else { throw ProblemError.badRequest("Field '\(field)' is not base64url.") }
        return bytes
    }

    /// Records an audit event; a failure to record one does not change the answer.
    func record(actor: String, action: AuditAction, subject: String, details: [String: String] = [:]) async {
        try? await audit.record(AuditEntry(at: clock(), actor: actor, action: action, subject: subject, details: details))
    }

    /// Spends `challenge`, or answers 400 `challenge_invalid`.
    func consumeChallenge(_ challenge: String, purpose: ChallengePurpose) async throws -> Challenge {
        guard let spent = try await auth.consumeChallenge(challenge, purpose: purpose, now: clock()) else {
            throw ProblemError(
                400, code: .challengeInvalid, title: "The challenge is unknown, used or expired.",
                detail: "Start again: ask for new options.")
        }
        return spent
    }

    // MARK: Registration

    /// Every registration is proven by a one-time code emailed to the address: asked without one,
    /// the code is sent (202); asked with it, the code is spent and the creation options answered.
    /// The code, not a session, is what proves the address is the person's: a live access token
    /// alone never adds a passkey (it would turn a 15-minute token into a permanent one), and a
    /// seeded account is claimed only by whoever reads its email. The same code is the way back
    /// after a lost or locked passkey.
    /// `caller` is looked up only once the body is known to be good.
    func registerOptions(_ input: Operations.RegisterOptions.Input, caller: () async throws -> Caller?) async throws
        -> Operations.RegisterOptions.Output
    {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let email = try Self.normalizedEmail(body.email)
        if let name = body.displayName, name.unicodeScalars.count > 64 {
            throw ProblemError.badRequest("Field 'display_name' must be at most 64 characters.")
        }
        let caller = try await caller()
        let now = clock()
        let limits = configuration.codeLimits
        guard let code = body.code else {
            if let wait = askBudget.take(RequestClient.address ?? "", limit: limits.asksPerClient, now: now) {
                throw ProblemError.rateLimited(
                    "Too many registration codes were asked for from this address.", retryAfter: wait,
                    detail: "Try again in \(Self.wait(wait)).")
            }
            switch try await auth.askRegistrationCode(
                email: email, code: Self.newCode(), expiresAt: now.addingTimeInterval(Self.codeLifetime),
                now: now, limits: limits)
            {
            case .mailed(let expires, let again):
                await record(
                    actor: caller?.userID ?? "anonymous", action: .registrationCodeSent, subject: email,
                    details: again ? ["code": "live_code_sent_again"] : [:])
                return .accepted(.init(body: .json(.init(email: email, digits: Self.codeDigits, expiresAt: expires))))
            case .limited(let wait):
                // Not audited one by one: a flood of refused asks would otherwise grow the trail.
                throw ProblemError.rateLimited(
                    "This address was sent as many codes as it may be in an hour.", retryAfter: wait,
                    detail: "Use the code already sent, or try again in \(Self.wait(wait)).")
            }
        }
        if let wait = guessBudget.take(RequestClient.address ?? "", limit: limits.guessesPerClient, now: now) {
            throw ProblemError.rateLimited(
                "Too many codes were tried from this address.", retryAfter: wait,
                detail: "Try again in \(Self.wait(wait)).")
        }
        switch try await auth.spendRegistrationCode(email: email, code: code, now: now, limits: limits) {
        case .accepted:
            break
        case .wrong(let left):
            await record(actor: caller?.userID ?? "anonymous", action: .registrationCodeRefused, subject: email, details: ["reason": "code_invalid"])
            throw ProblemError(
                400, code: .codeInvalid, title: "That is not the code we emailed.",
                detail: "\(left) more wrong tr\(left == 1 ? "y" : "ies") allowed for this address in the next 10 minutes.")
        case .limited(let wait):
            throw ProblemError.rateLimited(
                "Too many wrong codes were tried for this address.", retryAfter: wait,
                detail: "Try again in \(Self.wait(wait)).")
        case .expired:
            await record(actor: caller?.userID ?? "anonymous", action: .registrationCodeRefused, subject: email, details: ["reason": "code_expired"])
            throw ProblemError(
                400, code: .codeExpired, title: "The code expired or was used.",
                detail: "Ask for a new one: start the registration again.")
        }
        let challenge = Tokens.random()
        let offer = try await auth.offerRegistration(
            RegistrationChallenge(
                challenge: challenge, email: email, displayName: body.displayName, newHandle: newUserHandle(),
                sessionID: caller?.sessionID, expiresAt: now.addingTimeInterval(Self.challengeLifetime)),
            now: now
        )
        return .ok(
            .init(
                body: .json(
                    .init(
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
        let clientData = try Self.checked { () throws(WebAuthnRefusal) in try verifier.clientData(clientDataBytes, type: "webauthn.create") }
        let challenge = try await consumeChallenge(clientData.challenge, purpose: .register)
        guard let email = challenge.email, let handle = challenge.userHandle else { throw ProblemError.internalError }
        let credential: WebAuthnVerifier.NewCredential
        do {
            let attestation = try Self.bytes(body.response.attestationObject, field: "response.attestationObject")
            credential = try Self.checked { () throws(WebAuthnRefusal) in
                try verifier.verifyRegistration(attestationObject: attestation, requireUserVerification: true)
            }
            guard Base64URL.encode(credential.id) == body.id, body.rawId == body.id else {
                throw ProblemError.badRequest("The credential ID does not match the attestation.")
            }
        } catch let problem as ProblemError {
            await record(actor: email, action: .passkeyRegistrationRefused, subject: challenge.userID ?? email, details: ["reason": problem.code.rawValue])
            throw problem
        }
        let now = clock()
        let minted = mint.mint(now: now, method: "registration")
        let passkey = NewPasskey(
            credentialID: body.id, email: email, displayName: challenge.displayName, userHandle: handle,
            publicKey: credential.publicKey, signCount: credential.signCount, transports: body.response.transports)
        let registered = try await auth.register(passkey, session: minted.session, now: now) { facts in
            // The account may have changed since the options were issued: it must still be the one
            // offered (same user handle). The emailed code, spent before the options, proved the
            // address: an account that has passkeys takes another with it (a new device, or a
            // recovery), and is emailed about it.
            if let existing = facts.existing, existing.handle != handle {
                throw ProblemError(
                    409, code: .accountExists, title: "This account was registered meanwhile.",
                    detail: "Start the registration again.")
            }
            if facts.credentialTaken {
                throw ProblemError(409, code: .conflict, title: "This passkey is already registered.")
            }
        }
        return .ok(.init(body: .json(mint.grant(minted, account: registered.account))))
    }

    // MARK: Passkeys

    func listPasskeys(_ input: Operations.ListPasskeys.Input, caller: Caller) async throws -> Operations.ListPasskeys.Output {
        .ok(.init(body: .json(.init(passkeys: try await auth.passkeys(userID: caller.userID)))))
    }

    /// Removes one of the caller's passkeys, with a step-up bound to it (`PasskeyRemovalAction`):
    /// a session alone, which a stolen token is, never removes a passkey.
    func removePasskey(_ input: Operations.RemovePasskey.Input, caller: Caller) async throws -> Operations.RemovePasskey.Output {
        let id = input.path.passkeyId
        let actionHash = PasskeyRemovalAction(passkeyID: id).actionHash
        let now = clock()
        let gate = StepUpGate(
            actionHash: actionHash, needs: "Removing a passkey needs a step-up.", notValidFor: "removing this passkey",
            detail: "Confirm it with a passkey of the account; the grant must be bound to action_hash.",
            actor: caller.userID, subject: caller.userID, details: ["credential_id": id])
        guard let grant = input.headers.raxxStepUpGrant else {
            let refusal = gate.required(now: now)
            try? await audit.record(refusal.entry)
            throw refusal.problem
        }
        switch try await auth.removePasskey(id: id, userID: caller.userID, grantHash: Tokens.hash(grant), actionHash: actionHash, now: now) {
        case .removed:
            return .noContent(.init())
        case .notFound:
            throw ProblemError.notFound("No passkey \(id) on this account.")
        case .last:
            throw ProblemError(
                409, code: .lastPasskey, title: "This is the account's only passkey.",
                detail: "Register another first (raxx-auth register on another device), then remove this one.")
        case .grantRefused:
            let refusal = gate.refused(now: now)
            try? await audit.record(refusal.entry)
            throw refusal.problem
        }
    }

    // MARK: Sign-in

    func requestOptions(challenge: String, credentialIDs: [String]) -> Components.Schemas.PublicKeyCredentialRequestOptionsJSON {
        .init(
            challenge: challenge, timeout: Int(Self.challengeLifetime * 1000), rpId: configuration.relyingPartyID,
            allowCredentials: credentialIDs.map { .init(_type: .publicKey, id: $0) }, userVerification: .required)
    }

    func loginOptions(_ input: Operations.LoginOptions.Input) async throws -> Operations.LoginOptions.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let email = try body.email.map { (text) throws(ProblemError) in try Self.normalizedEmail(text) }
        let challenge = Tokens.random()
        // An unknown email gets options too (with no credentials), so answers do not reveal who has an account.
        let now = clock()
        let credentialIDs = try await auth.offerLogin(
            challenge: challenge, email: email,
            expiresAt: now.addingTimeInterval(Self.challengeLifetime), now: now)
        return .ok(.init(body: .json(requestOptions(challenge: challenge, credentialIDs: credentialIDs))))
    }

    /// Verifies an assertion for `purpose`; answers the user it signs in and the challenge.
    func verifyAssertion(_ body: Components.Schemas.AuthenticationResponseJSON, purpose: ChallengePurpose) async throws
        -> (userID: String, challenge: Challenge)
    {
        let clientDataBytes = try Self.bytes(body.response.clientDataJSON, field: "response.clientDataJSON")
        let clientData = try Self.checked { () throws(WebAuthnRefusal) in try verifier.clientData(clientDataBytes, type: "webauthn.get") }
        let challenge = try await consumeChallenge(clientData.challenge, purpose: purpose)
        let stored = try await auth.passkey(id: body.id)
        guard let stored, challenge.userID == nil || challenge.userID == stored.userID else {
            throw ProblemError(400, code: .credentialUnknown, title: "This passkey is not registered for the account.")
        }
        if let handle = body.response.userHandle, Base64URL.decode(handle) != stored.userHandle {
            throw ProblemError(400, code: .credentialUnknown, title: "The user handle does not match the passkey.")
        }
        guard let publicKey = try? P256.Signing.PublicKey(x963Representation: stored.publicKey) else {
            throw ProblemError.internalError
        }
        let authenticatorData = try Self.bytes(body.response.authenticatorData, field: "response.authenticatorData")
        let signature = try Self.bytes(body.response.signature, field: "response.signature")
        let newCount = try Self.checked { () throws(WebAuthnRefusal) in
            try verifier.verifyAssertion(
                clientDataJSON: clientDataBytes, authenticatorData: authenticatorData, signature: signature,
                publicKey: publicKey, storedSignCount: stored.signCount, requireUserVerification: true)
        }
        try await auth.recordAssertion(credentialID: body.id, signCount: newCount, now: clock())
        return (stored.userID, challenge)
    }

    func loginVerify(_ input: Operations.LoginVerify.Input) async throws -> Operations.LoginVerify.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let userID: String
        do {
            userID = try await verifyAssertion(body, purpose: .login).userID
        } catch let problem as ProblemError {
            await record(actor: "anonymous", action: .signInRefused, subject: body.id, details: ["reason": problem.code.rawValue])
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
        let credentialIDs = try await auth.offerStepUp(
            challenge: challenge, userID: caller.userID, actionHash: body.actionHash,
            expiresAt: now.addingTimeInterval(Self.challengeLifetime), now: now)
        return .ok(.init(body: .json(requestOptions(challenge: challenge, credentialIDs: credentialIDs))))
    }

    func stepUpVerify(_ input: Operations.StepUpVerify.Input, caller: Caller) async throws -> Operations.StepUpVerify.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let verified: (userID: String, challenge: Challenge)
        do {
            verified = try await verifyAssertion(body, purpose: .stepUp)
            guard verified.userID == caller.userID, verified.challenge.userID == caller.userID, verified.challenge.actionHash != nil else {
                throw ProblemError(403, code: .stepUpInvalid, title: "The step-up does not belong to this session.")
            }
        } catch let problem as ProblemError {
            await record(actor: caller.userID, action: .stepUpRefused, subject: caller.userID, details: ["reason": problem.code.rawValue])
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

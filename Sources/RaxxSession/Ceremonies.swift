import Crypto
import Foundation
import RaxxAPI
import RaxxCore
import RaxxHTTP
import RaxxVault

/// The passkey ceremonies against Raptor: registration, sign-in, step-up and sign-out, with this
/// device's software authenticator and keystore.
public struct Ceremonies: Sendable {
    public typealias PINPrompt = @Sendable (_ confirm: Bool) throws -> SecretBytes

    public let keystore: any KeystoreAccess
    /// The API without a session (registration and sign-in need no token).
    public let client: any APIProtocol
    /// The API with the session's bearer token (step-up, sign-out).
    public let authenticatedClient: any APIProtocol
    public let clock: @Sendable () -> Date

    public init(keystore: any KeystoreAccess, client: any APIProtocol, authenticatedClient: any APIProtocol,
                clock: @escaping @Sendable () -> Date) {
        self.keystore = keystore
        self.client = client
        self.authenticatedClient = authenticatedClient
        self.clock = clock
    }

    static func bytes(_ text: String, _ what: String) throws(RaxxError) -> [UInt8] {
        guard let b = Base64URL.decode(text) else {
            throw RaxxError.failure(code: "bad_response", "The server's \(what) is not base64url.")
        }
        return b
    }

    // MARK: Registration

    /// Creates a passkey for `email` on this device and signs in.
    public func register(email: String, displayName: String? = nil, pin: PINPrompt) async throws -> StoredSession {
        try await keystore.withLock {
            var contents = try keystore.load()
            if let existing = contents.credential {
                throw RaxxError.failure(
                    code: "already_registered", "This device already holds a passkey for \(existing.email).",
                    hint: existing.email.caseInsensitiveCompare(email) == .orderedSame
                        ? "Sign in with it: raxx-auth login" : "Remove it first: raxx-auth logout --forget-device")
            }
            let options: Components.Schemas.PublicKeyCredentialCreationOptionsJSON
            switch try await client.registerOptions(body: .json(.init(email: email, displayName: displayName))) {
            case .ok(let ok): options = try ok.body.json
            case .default(_, let answer): throw try answer.raxxError
            }
            guard options.pubKeyCredParams.contains(where: { $0.alg == SoftwareAuthenticator.coseAlgorithmES256 }) else {
                throw RaxxError.failure(code: "algorithm_unsupported", "The server does not accept ES256 passkeys.")
            }
            guard let rpID = options.rp.id else {
                throw RaxxError.failure(code: "bad_response", "The server's registration options name no relying party.")
            }
            let secret = try pin(true)
            defer { secret.wipe() }
            let clientData = ClientData.json(type: "webauthn.create", challenge: options.challenge, rpID: rpID)
            let registration = try SoftwareAuthenticator.makeCredential(
                rpID: rpID, userHandle: try Self.bytes(options.user.id, "user handle"), email: email,
                clientDataHash: ClientData.hash(clientData), pin: secret, now: clock())
            let id = Base64URL.encode(registration.credentialID)
            let response = Components.Schemas.RegistrationResponseJSON(
                id: id, rawId: id, _type: .publicKey,
                response: .init(clientDataJSON: Base64URL.encode(clientData),
                                attestationObject: Base64URL.encode(registration.attestationObject),
                                authenticatorData: Base64URL.encode(registration.authenticatorData),
                                transports: ["internal"], publicKeyAlgorithm: Int(SoftwareAuthenticator.coseAlgorithmES256),
                                publicKey: Base64URL.encode(registration.publicKeyDER)),
                authenticatorAttachment: .platform, clientExtensionResults: .init())
            switch try await client.registerVerify(body: .json(response)) {
            case .ok(let ok):
                let session = StoredSession(grant: try ok.body.json, signedInAt: clock())
                contents.credential = registration.credential
                contents.session = session
                try keystore.save(contents)
                return session
            case .default(_, let answer):
                throw try answer.raxxError
            }
        }
    }

    // MARK: Sign-in

    /// Signs in with this device's passkey (the PIN unlocks it).
    public func login(email: String?, pin: PINPrompt) async throws -> StoredSession {
        try await keystore.withLock {
            var contents = try keystore.load()
            guard var credential = contents.credential else {
                throw RaxxError(code: "no_passkey", message: "This device has no passkey yet.",
                                hint: "Create one: raxx-auth register --email you@example.com", status: .signInRequired)
            }
            if let email, email.caseInsensitiveCompare(credential.email) != .orderedSame {
                throw RaxxError.failure(code: "other_account", "This device's passkey belongs to \(credential.email), not \(email).",
                                        hint: "To switch accounts: raxx-auth logout --forget-device, then raxx-auth register.")
            }
            let options: Components.Schemas.PublicKeyCredentialRequestOptionsJSON
            switch try await client.loginOptions(body: .json(.init(email: credential.email))) {
            case .ok(let ok): options = try ok.body.json
            case .default(_, let answer): throw try answer.raxxError
            }
            if let allowed = options.allowCredentials, !allowed.contains(where: { $0.id == credential.credentialID }) {
                throw RaxxError(code: "passkey_unknown", message: "The server does not know this device's passkey.",
                                hint: "Register this device again: raxx-auth logout --forget-device, then raxx-auth register.",
                                status: .signInRequired)
            }
            let assertion = try assert(&contents, &credential, rpID: options.rpId ?? credential.rpID,
                                       type: "webauthn.get", challenge: options.challenge, pin: pin)
            switch try await client.loginVerify(body: .json(assertion)) {
            case .ok(let ok):
                let session = StoredSession(grant: try ok.body.json, signedInAt: clock())
                contents.session = session
                try keystore.save(contents)
                return session
            case .default(_, let answer):
                throw try answer.raxxError
            }
        }
    }

    /// Signs an assertion and saves the credential's new state (counter, wrong-PIN count) whatever
    /// the outcome, so a wrong PIN counts and the counter never goes back.
    private func assert(_ contents: inout KeystoreContents, _ credential: inout StoredCredential, rpID: String,
                        type: String, challenge: String, pin: PINPrompt) throws -> Components.Schemas.AuthenticationResponseJSON {
        guard credential.failedPINAttempts < PIN.maximumAttempts else { throw SoftwareAuthenticator.pinLocked }
        let secret = try pin(false)
        defer { secret.wipe() }
        let clientData = ClientData.json(type: type, challenge: challenge, rpID: rpID)
        let result = Result { () throws(RaxxError) in
            try SoftwareAuthenticator.getAssertion(credential: &credential, rpID: rpID,
                                                   clientDataHash: ClientData.hash(clientData), pin: secret)
        }
        contents.credential = credential
        try keystore.save(contents)
        let assertion = try result.get()
        let id = Base64URL.encode(assertion.credentialID)
        return .init(id: id, rawId: id, _type: .publicKey,
                     response: .init(clientDataJSON: Base64URL.encode(clientData),
                                     authenticatorData: Base64URL.encode(assertion.authenticatorData),
                                     signature: Base64URL.encode(assertion.signature),
                                     userHandle: Base64URL.encode(assertion.userHandle)),
                     authenticatorAttachment: .platform, clientExtensionResults: .init())
    }

    // MARK: Step-up

    /// A fresh, PIN-verified assertion bound to `actionHash`: answers a single-use grant for that
    /// action and this account. A wrong PIN or a refusal is `notPermitted` (exit 77).
    public func stepUp(actionHash: String, pin: PINPrompt) async throws -> Components.Schemas.StepUpGrant {
        let options: Components.Schemas.PublicKeyCredentialRequestOptionsJSON
        switch try await authenticatedClient.stepUpOptions(body: .json(.init(actionHash: actionHash))) {
        case .ok(let ok): options = try ok.body.json
        case .default(_, let answer): throw try answer.raxxError
        }
        let assertion = try await keystore.withLock {
            var contents = try keystore.load()
            guard var credential = contents.credential else {
                throw RaxxError.notPermitted(code: "step_up_refused", "This device has no passkey to confirm the action with.")
            }
            return try assert(&contents, &credential, rpID: options.rpId ?? credential.rpID, type: "webauthn.get",
                              challenge: options.challenge, pin: pin)
        }
        switch try await authenticatedClient.stepUpVerify(body: .json(assertion)) {
        case .ok(let ok):
            return try ok.body.json
        case .default(_, let answer):
            let error = try answer.raxxError
            if error.status == .signInRequired { throw error }
            throw RaxxError.notPermitted(code: "step_up_refused", "The step-up was refused: \(error.message)")
        }
    }

    // MARK: Sign-out

    public struct LogoutOutcome: Sendable, Equatable {
        /// The server revoked the session.
        public var revokedOnServer: Bool
        /// When the server will end the session by itself (when it could not be told).
        public var lapsesAt: Date?
        public var hadSession: Bool
        public var forgotDevice: Bool
    }

    /// Revokes the session on the server when it can, and always wipes the tokens here; offline,
    /// says when the server's session will lapse by itself. `forgetDevice` destroys the passkey too.
    public func logout(forgetDevice: Bool) async throws -> LogoutOutcome {
        let contents = try keystore.load()
        var outcome = LogoutOutcome(revokedOnServer: false, lapsesAt: nil, hadSession: contents.session != nil, forgotDevice: forgetDevice)
        if let session = contents.session, session.sessionExpiresAt > clock() {
            do {
                switch try await authenticatedClient.logout() {
                case .noContent: outcome.revokedOnServer = true
                case .default: outcome.revokedOnServer = true // already over on the server
                }
            } catch {
                let e = ErrorMapping.raxxError(from: error)
                if e.status == .signInRequired {
                    outcome.revokedOnServer = true
                } else {
                    outcome.lapsesAt = session.sessionExpiresAt
                }
            }
        }
        try await keystore.withLock {
            var latest = try keystore.load()
            latest.session = nil
            if forgetDevice { latest.credential = nil }
            if latest.credential == nil { try keystore.destroy() } else { try keystore.save(latest) }
        }
        return outcome
    }
}

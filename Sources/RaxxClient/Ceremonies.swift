import Crypto
import Foundation
import RaxxAPI
import RaxxCore
import RaxxSecrets
import RaxxVault
import RaxxWebAuthn
import RaxxWire

/// The passkey ceremonies against one Raptor server: registration, sign-in, step-up and sign-out,
/// with this device's software authenticator and keystore. What the keystore holds is the
/// server's own (by origin), and a passkey signs only for an RP ID the server's host permits
/// (`APIEndpoint.permits(rpID:)`): a server asking for another site's is refused (77) before
/// anything is signed.
public struct Ceremonies: Sendable {
    /// How a ceremony gets the PIN: `ask` answers it (a new passkey's when `confirm`). When a
    /// person is asked at a terminal, `wrong` is set: after a wrong PIN it is told the refusal
    /// (the attempts left) and the PIN is asked again, up to the lockout. From a file descriptor
    /// or a script it is nil, and a wrong PIN ends the command (77).
    public struct PINPrompt: Sendable {
        public let ask: @Sendable (_ confirm: Bool) throws -> SecretBytes
        public let wrong: (@Sendable (_ refusal: RaxxError) -> Void)?

        public init(wrong: (@Sendable (_ refusal: RaxxError) -> Void)? = nil, _ ask: @escaping @Sendable (_ confirm: Bool) throws -> SecretBytes) {
            self.ask = ask
            self.wrong = wrong
        }
    }
    /// Asks for the one-time code the server emailed to `email` (`digits` long).
    public typealias CodePrompt = @Sendable (_ email: String, _ digits: Int) throws -> String
    /// Asks for the code again after `refusal` (a slip: empty, the wrong length, or not the code
    /// emailed), where a person can be asked (a terminal); the same code stays live meanwhile.
    public typealias CodeRetry = @Sendable (_ refusal: RaxxError, _ digits: Int) throws -> String
    /// How many slips a registration forgives on a terminal (the server counts the wrong codes too).
    public static let codeRetries = 3

    /// For a relying party that is known to send no code: asked for one, it fails.
    public static let noCode: CodePrompt = { email, _ in
        throw RaxxError(
            code: .codeRequired, message: "The server emailed a one-time code to \(email).",
            hint: "Give it on a terminal, or with --code-fd N.")
    }

    public let keystore: any KeystoreAccess
    /// The API without a session (registration and sign-in need no token).
    public let client: any APIProtocol
    /// The API with the session's bearer token (step-up, sign-out).
    public let authenticatedClient: any APIProtocol
    /// The server: its origin keys the keystore, its host decides the RP IDs a passkey may sign for.
    public let endpoint: APIEndpoint
    public let clock: @Sendable () -> Date

    public init(
        keystore: any KeystoreAccess, client: any APIProtocol, authenticatedClient: any APIProtocol,
        endpoint: APIEndpoint, clock: @escaping @Sendable () -> Date
    ) {
        self.keystore = keystore
        self.client = client
        self.authenticatedClient = authenticatedClient
        self.endpoint = endpoint
        self.clock = clock
    }

    var origin: String { endpoint.origin }

    /// Refuses an RP ID this server's host does not permit (exit 77; nothing is signed).
    func checkRPID(_ rpID: String) throws(RaxxError) {
        guard endpoint.permits(rpID: rpID) else {
            throw RaxxError(
                code: .rpIDRefused, message: "\(origin) asked for a passkey of \(rpID), which is not its own site: nothing was signed.",
                hint: "A server may only ask for its own host or a parent domain of it (localhost for a loopback server).")
        }
    }

    static func bytes(_ text: String, _ what: String) throws(RaxxError) -> [UInt8] {
        guard let b = Base64URL.decode(text) else {
            throw RaxxError(code: .badResponse, message: "The server's \(what) is not base64url.")
        }
        return b
    }

    // MARK: Registration

    /// Creates a passkey for `email` on this device and signs in.
    /// The server asks for a one-time code emailed to the address first (it answers 202); only
    /// then is `code` asked, and the options asked for again with it. A server that sends no code
    /// answers the options at once.
    public func register(
        email: String, displayName: String? = nil, pin: PINPrompt, code: CodePrompt = noCode,
        retry: CodeRetry? = nil
    ) async throws -> StoredSession {
        try await keystore.withLock {
            var contents = try keystore.load()
            if let existing = contents[origin].credential {
                throw RaxxError(
                    code: .alreadyRegistered, message: "This device already holds a passkey for \(existing.email) at \(origin).",
                    hint: existing.email.caseInsensitiveCompare(email) == .orderedSame
                        ? "Sign in with it: raxx-auth login" : "Remove it first: raxx-auth logout --forget-device")
            }
            var options: Components.Schemas.PublicKeyCredentialCreationOptionsJSON? = nil
            var given: String? = nil
            var digits = 0
            var slips = 0
            // A code read, held to its form; a slip is asked again where a person can be (`retry`).
            func checked(_ read: () throws -> String, email: String) throws -> String {
                var text: String
                do {
                    text = try read().trimmingCharacters(in: .whitespaces)
                } catch let nothing as RaxxError where nothing.status == .dataError && retry != nil {
                    text = ""  // an empty Enter: a slip like any other
                }
                while !(text.count == digits && text.allSatisfy(\.isASCIIDigitCharacter)) {
                    let slip = RaxxError.badInput(field: "code", "the code is \(digits) digits, as the email to \(email) shows")
                    slips += 1
                    guard let retry, slips <= Self.codeRetries else { throw slip }
                    do {
                        text = try retry(slip, digits).trimmingCharacters(in: .whitespaces)
                    } catch let nothing as RaxxError where nothing.status == .dataError {
                        text = ""
                    }
                }
                return text
            }
            while options == nil {
                switch try await client.registerOptions(body: .json(.init(email: email, displayName: displayName, code: given))) {
                case .ok(let ok):
                    options = try ok.body.json
                case .accepted(let sent) where given == nil:
                    let sent = try sent.body.json
                    digits = sent.digits
                    given = try checked({ try code(sent.email, sent.digits) }, email: sent.email)
                case .accepted:
                    throw RaxxError(code: .badResponse, message: "The server sent a new code instead of taking the one given.")
                case .default(_, let answer):
                    let refusal = try answer.raxxError
                    // Not the code emailed: on a terminal it is asked again, and sent with the same
                    // ask (no new mail); an expired code, or a budget spent, ends the run.
                    slips += 1
                    guard refusal.code == Components.Schemas.ProblemCode.codeInvalid.rawValue, let retry, slips <= Self.codeRetries else {
                        throw refusal
                    }
                    given = try checked({ try retry(refusal, digits) }, email: email)
                }
            }
            guard let options else { throw RaxxError(code: .badResponse, message: "The server sent no registration options.") }
            guard options.pubKeyCredParams.contains(where: { $0.alg == SoftwareAuthenticator.coseAlgorithmES256 }) else {
                throw RaxxError(code: .algorithmUnsupported, message: "The server does not accept ES256 passkeys.")
            }
            guard let rpID = options.rp.id else {
                throw RaxxError(code: .badResponse, message: "The server's registration options name no relying party.")
            }
            try checkRPID(rpID)
            let secret = try pin.ask(true)
            defer { secret.wipe() }
            guard secret.count >= PIN.minimumNewLength else {
                throw RaxxError.badInput(PIN.newLengthRule)
            }
            let clientData = ClientData.json(type: "webauthn.create", challenge: options.challenge, origin: APIEndpoint.clientOrigin(rpID: rpID))
            let registration = try SoftwareAuthenticator.makeCredential(
                rpID: rpID, userHandle: try Self.bytes(options.user.id, "user handle"), email: email,
                clientDataHash: ClientData.hash(clientData), pin: secret, now: clock())
            let id = Base64URL.encode(registration.credentialID)
            let response = Components.Schemas.RegistrationResponseJSON(
                id: id, rawId: id, _type: .publicKey,
                response: .init(
                    clientDataJSON: Base64URL.encode(clientData),
                    attestationObject: Base64URL.encode(registration.attestationObject),
                    authenticatorData: Base64URL.encode(registration.authenticatorData),
                    transports: ["internal"], publicKeyAlgorithm: Int(SoftwareAuthenticator.coseAlgorithmES256),
                    publicKey: Base64URL.encode(registration.publicKeyDER)),
                authenticatorAttachment: .platform, clientExtensionResults: .init())
            switch try await client.registerVerify(body: .json(response)) {
            case .ok(let ok):
                let session = StoredSession(grant: try ok.body.json, signedInAt: clock(), receivedAt: clock())
                contents[origin] = ServerCredentials(credential: registration.credential, session: session)
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
            // A passkey kept from a keystore that did not record its server is this server's when
            // it was made for an RP ID this server permits.
            if contents[origin].credential == nil, let unbound = contents.unboundCredential, endpoint.permits(rpID: unbound.rpID) {
                contents[origin].credential = unbound
                contents.unboundCredential = nil
            }
            guard var credential = contents[origin].credential else {
                throw RaxxError(
                    code: .noPasskey, message: "This device has no passkey for \(origin) yet.",
                    hint: "Create one: raxx-auth register --email you@example.com")
            }
            if let email, email.caseInsensitiveCompare(credential.email) != .orderedSame {
                throw RaxxError(
                    code: .otherAccount, message: "This device's passkey belongs to \(credential.email), not \(email).",
                    hint: "To switch accounts: raxx-auth logout --forget-device, then raxx-auth register.")
            }
            let options: Components.Schemas.PublicKeyCredentialRequestOptionsJSON
            switch try await client.loginOptions(body: .json(.init(email: credential.email))) {
            case .ok(let ok): options = try ok.body.json
            case .default(_, let answer): throw try answer.raxxError
            }
            if let allowed = options.allowCredentials, !allowed.contains(where: { $0.id == credential.credentialID }) {
                throw RaxxError(
                    code: .passkeyUnknown, message: "The server does not know this device's passkey.",
                    hint: "Register this device again: raxx-auth logout --forget-device, then raxx-auth register.")
            }
            let assertion = try assert(
                &contents, &credential, rpID: options.rpId ?? credential.rpID,
                type: "webauthn.get", challenge: options.challenge, pin: pin)
            switch try await client.loginVerify(body: .json(assertion)) {
            case .ok(let ok):
                let session = StoredSession(grant: try ok.body.json, signedInAt: clock(), receivedAt: clock())
                contents[origin].session = session
                try keystore.save(contents)
                return session
            case .default(_, let answer):
                throw try answer.raxxError
            }
        }
    }

    /// Signs an assertion and saves the credential's new state (counter, wrong-PIN count) whatever
    /// the outcome, so a wrong PIN counts and the counter never goes back. A person at a terminal
    /// is asked again after a wrong PIN, until the passkey locks; nothing reaches the server
    /// before the PIN is right.
    private func assert(
        _ contents: inout KeystoreContents, _ credential: inout StoredCredential, rpID: String,
        type: String, challenge: String, pin: PINPrompt
    ) throws -> Components.Schemas.AuthenticationResponseJSON {
        try checkRPID(rpID)
        let clientData = ClientData.json(type: type, challenge: challenge, origin: APIEndpoint.clientOrigin(rpID: rpID))
        let assertion: SoftwareAuthenticator.Assertion
        while true {
            guard credential.failedPINAttempts < PIN.maximumAttempts else { throw SoftwareAuthenticator.pinLocked }
            let secret = try pin.ask(false)
            defer { secret.wipe() }
            let result = Result { () throws(RaxxError) in
                try SoftwareAuthenticator.getAssertion(
                    credential: &credential, rpID: rpID,
                    clientDataHash: ClientData.hash(clientData), pin: secret)
            }
            contents[origin].credential = credential
            try keystore.save(contents)
            if case .failure(let refusal) = result, refusal.is(SoftwareAuthenticator.wrongPINCode), let wrong = pin.wrong {
                wrong(refusal)
                continue
            }
            assertion = try result.get()
            break
        }
        let id = Base64URL.encode(assertion.credentialID)
        return .init(
            id: id, rawId: id, _type: .publicKey,
            response: .init(
                clientDataJSON: Base64URL.encode(clientData),
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
            guard var credential = contents[origin].credential else {
                throw RaxxError(code: .stepUpRefused, message: "This device has no passkey for \(origin) to confirm the action with.")
            }
            return try assert(
                &contents, &credential, rpID: options.rpId ?? credential.rpID, type: "webauthn.get",
                challenge: options.challenge, pin: pin)
        }
        switch try await authenticatedClient.stepUpVerify(body: .json(assertion)) {
        case .ok(let ok):
            return try ok.body.json
        case .default(_, let answer):
            let error = try answer.raxxError
            if error.status == .signInRequired { throw error }
            throw RaxxError(code: .stepUpRefused, message: "The step-up was refused: \(error.message)")
        }
    }

    /// `stepUp(actionHash:pin:)` for any action: an order, an erasure plan — whatever the
    /// server recomputes the same canonical hash from.
    public func stepUp(for action: some StepUpAction, pin: PINPrompt) async throws -> Components.Schemas.StepUpGrant {
        try await stepUp(actionHash: action.actionHash, pin: pin)
    }

    // MARK: Sign-out

    public struct LogoutOutcome: Sendable, Equatable {
        /// The server confirmed the session is over (revoked now, or already ended).
        public var revokedOnServer: Bool
        /// When the server will end the session by itself (when it did not confirm).
        public var lapsesAt: Date?
        /// Why the server did not confirm: it could not be reached, or it answered otherwise.
        public var unconfirmedBecause: Unconfirmed?
        public var hadSession: Bool
        public var forgotDevice: Bool

        public enum Unconfirmed: String, Sendable, Equatable {
            case unreachable
            case refused
        }
    }

    /// Revokes the session on the server when it can, and always wipes this server's tokens here.
    /// "Revoked" is said only when the server confirmed it (204, or an answer that the session is
    /// already over); otherwise the outcome says when the server's session lapses by itself.
    /// `forgetDevice` destroys this server's passkey too.
    public func logout(forgetDevice: Bool) async throws -> LogoutOutcome {
        let contents = try keystore.load()
        let session = contents[origin].session
        var outcome = LogoutOutcome(revokedOnServer: false, lapsesAt: nil, hadSession: session != nil, forgotDevice: forgetDevice)
        if let session, session.sessionExpiresAt > clock() {
            do {
                switch try await authenticatedClient.logout() {
                case .noContent:
                    outcome.revokedOnServer = true
                case .default(_, let answer):
                    if (try? answer.raxxError)?.status == .signInRequired {
                        outcome.revokedOnServer = true  // already over on the server
                    } else {
                        outcome.lapsesAt = session.sessionExpiresAt
                        outcome.unconfirmedBecause = .refused
                    }
                }
            } catch {
                let e = ErrorMapping.raxxError(from: error)
                if e.status == .signInRequired {
                    outcome.revokedOnServer = true  // the renewal was refused: the session is over
                } else {
                    outcome.lapsesAt = session.sessionExpiresAt
                    outcome.unconfirmedBecause = e.connectivity?.isOffline == true ? .unreachable : .refused
                }
            }
        }
        try await keystore.withLock {
            var latest = try keystore.load()
            latest[origin].session = nil
            if forgetDevice { latest[origin].credential = nil }
            if latest.isEmpty { try keystore.destroy() } else { try keystore.save(latest) }
        }
        return outcome
    }
}

extension Character {
    /// 0 to 9 (not every Unicode digit: a code is ASCII).
    var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}

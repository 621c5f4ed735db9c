import Foundation
import GRDB
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxSandboxTestSupport
import RaxxSecrets
import RaxxTestSupport
import RaxxVault
import RaxxWebAuthn
import Synchronization
import Testing

@testable import RaxxClient
@testable import RaxxSandbox

/// Registration, sign-in, renewal, step-up and sign-out against an in-process sandbox, with a
/// shared hand-moved clock and a keystore in a folder of the test's own.
final class AuthRig: @unchecked Sendable {
    let clock = TestClock(Date(timeIntervalSince1970: 1_795_000_000))
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-session-\(UUID().uuidString)")
    let database: SandboxDatabase
    let configuration: SandboxConfiguration

    init(
        tokenTTL: RaxxDuration = .seconds(60), sessionTTL: RaxxDuration = .hours(1), origin: String = "https://localhost",
        stepUpNotional: Decimal = 10_000
    ) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try "11112222333344445555666677778888".write(to: folder.appendingPathComponent("machine-id"), atomically: true, encoding: .utf8)
        database = try SandboxDatabase(path: ":memory:")
        configuration = SandboxConfiguration(origin: origin, accessTokenTTL: tokenTTL, sessionTTL: sessionTTL, stepUpNotional: stepUpNotional)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    var keystore: Keystore { Keystore(directory: folder.appendingPathComponent("state"), machineIDPath: folder.appendingPathComponent("machine-id").path) }

    func ceremonies(_ url: URL, recorder: Recorder? = nil) throws -> Ceremonies {
        let plain = try generatedClient(url, middlewares: recorder.map { [$0] } ?? [])
        let endpoint = try APIEndpoint(parsing: url.absoluteString)
        let tokens = SessionTokens(keystore: keystore, client: plain, origin: endpoint.origin, clock: clock.closure)
        let authed = try generatedClient(url, middlewares: [BearerTokenMiddleware(tokens: tokens)] + (recorder.map { [$0] } ?? []))
        return Ceremonies(keystore: keystore, client: plain, authenticatedClient: authed, endpoint: endpoint, clock: clock.closure)
    }

    /// The code a registration asks for, read from the sandbox's email as a person would.
    var code: Ceremonies.CodePrompt { database.mailbox.codePrompt }

    func run(_ body: (URL) async throws -> Void) async throws {
        try await withSandbox(configuration: configuration, database: database, clock: clock.closure, body)
    }

    func auditActions() throws -> [String] {
        try database.writer.read { try String.fetchAll($0, sql: "SELECT action FROM audit_events ORDER BY seq") }
    }
}

/// Records request bodies by operation, so a test can replay one.
final class Recorder: ClientMiddleware, @unchecked Sendable {
    private let lock = NSLock()
    private var bodies: [String: [UInt8]] = [:]

    private func record(_ operation: String, _ bytes: [UInt8]) { lock.lock(); bodies[operation] = bytes; lock.unlock() }

    func body(of operation: String) -> [UInt8]? { lock.lock(); defer { lock.unlock() }; return bodies[operation] }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let body else { return try await next(request, nil, baseURL) }
        let bytes = try await [UInt8](collecting: body, upTo: 1 << 20)
        record(operationID, bytes)
        return try await next(request, HTTPBody(bytes), baseURL)
    }
}

let goodPIN = Ceremonies.PINPrompt { _ in SecretBytes(copying: Array("246813".utf8)) }
let badPIN = Ceremonies.PINPrompt { _ in SecretBytes(copying: Array("135799".utf8)) }

func raxxCode(_ body: () async throws -> Void) async -> String? {
    do { try await body(); return nil } catch let e as RaxxError { return e.code } catch { return ErrorMapping.raxxError(from: error).code }
}

@Suite(.serialized) struct CeremonyTests {
    @Test func registerThenLoginThenLogout() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            let ceremonies = try rig.ceremonies(url)
            let registered = try await ceremonies.register(email: "Trader@Example.com", pin: goodPIN, code: rig.code)
            #expect(registered.email == "trader@example.com")
            #expect(registered.sessionExpiresAt == rig.clock.now.addingTimeInterval(3600))
            let contents = try rig.keystore.load()
            #expect(contents.onlyServer.credential?.email == "Trader@Example.com")
            #expect(contents.onlyServer.session == registered)

            let session = try await ceremonies.login(email: nil, pin: goodPIN)
            #expect(session.accountID == registered.accountID)
            #expect(session.accessToken != registered.accessToken)
            #expect(try rig.keystore.load().onlyServer.credential?.signCount == 1)

            let outcome = try await ceremonies.logout(forgetDevice: false)
            #expect(outcome.revokedOnServer && outcome.lapsesAt == nil)
            #expect(try rig.keystore.load().onlyServer.session == nil)
            #expect(try rig.keystore.load().onlyServer.credential != nil)
            // The revoked token no longer works.
            let status = try await generatedClient(url, middlewares: [BearerToken(session.accessToken)]).getSession()
            guard case .default(401, _) = status else { Issue.record("a revoked token still works: \(status)"); return }
        }
        #expect(
            try rig.auditActions() == [
                "registration.code_sent", "account.created", "passkey.registered", "session.started", "session.started",
                "session.revoked",
            ])
    }

    @Test func anotherDeviceWithoutTheEmailedCodeCannotAddAPasskey() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            _ = try await rig.ceremonies(url).register(email: "t@example.com", pin: goodPIN, code: rig.code)
            // Another device (another keystore) that cannot read the account's email: no code, or
            // a guessed one.
            let other = try AuthRig()
            let intruder = Ceremonies(
                keystore: other.keystore, client: try generatedClient(url), authenticatedClient: try generatedClient(url),
                endpoint: try APIEndpoint(parsing: url.absoluteString), clock: rig.clock.closure)
            #expect(await raxxCode { _ = try await intruder.register(email: "t@example.com", pin: goodPIN) } == "code_required")
            for guess in ["00000001", "12345678", "99999999"] {
                #expect(
                    await raxxCode { _ = try await intruder.register(email: "t@example.com", pin: goodPIN, code: { _, _ in guess }) }
                        == "code_invalid")
            }
            #expect(try await rig.database.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM passkeys") } == 1)
        }
    }

    @Test func aNewDeviceWithTheEmailedCodeAddsAPasskeyAndTheAccountHearsOfIt() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            let first = try await rig.ceremonies(url).register(email: "t@example.com", pin: goodPIN, code: rig.code)
            let other = try AuthRig()
            let device = Ceremonies(
                keystore: other.keystore, client: try generatedClient(url), authenticatedClient: try generatedClient(url),
                endpoint: try APIEndpoint(parsing: url.absoluteString), clock: rig.clock.closure)
            let second = try await device.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            #expect(second.accountID == first.accountID)
            #expect(try await rig.database.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM passkeys") } == 2)
            let mail = rig.database.mailbox.messages(to: "t@example.com")
            #expect(
                mail.map(\.subject) == [
                    "Your Raxx registration code", "Your Raxx passkey is ready",
                    "Your Raxx registration code", "A passkey was added to your Raxx account",
                ])
        }
    }

    @Test func wrongPINIsRefusedLocallyAndCounted() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            let ceremonies = try rig.ceremonies(url)
            _ = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            #expect(await raxxCode { _ = try await ceremonies.login(email: nil, pin: badPIN) } == "wrong_pin")
            #expect(try rig.keystore.load().onlyServer.credential?.failedPINAttempts == 1)
            for _ in 2...PIN.maximumAttempts { _ = await raxxCode { _ = try await ceremonies.login(email: nil, pin: badPIN) } }
            #expect(await raxxCode { _ = try await ceremonies.login(email: nil, pin: goodPIN) } == "pin_locked")
        }
    }

    /// A person at a terminal: told each wrong PIN with the attempts left and asked again, until
    /// the right one signs in (the count starts over) or the passkey locks.
    @Test func aWrongPINOnATerminalIsAskedAgainUpToTheLockout() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            let ceremonies = try rig.ceremonies(url)
            _ = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            let typed = Mutex(["135799", "000000", "246813"])
            let told = Mutex<[String]>([])
            let person = Ceremonies.PINPrompt(wrong: { refusal in told.withLock { $0.append(refusal.hint ?? "") } }) { _ in
                SecretBytes(copying: Array(typed.withLock { $0.removeFirst() }.utf8))
            }
            _ = try await ceremonies.login(email: nil, pin: person)
            #expect(told.withLock { $0 } == ["4 attempts left before the passkey locks.", "3 attempts left before the passkey locks."])
            #expect(typed.withLock { $0 }.isEmpty)
            #expect(try rig.keystore.load().onlyServer.credential?.failedPINAttempts == 0)

            let asked = Mutex(0)
            let wrongEveryTime = Ceremonies.PINPrompt(wrong: { _ in }) { _ in
                asked.withLock { $0 += 1 }
                return SecretBytes(copying: Array("135799".utf8))
            }
            #expect(await raxxCode { _ = try await ceremonies.login(email: nil, pin: wrongEveryTime) } == "pin_locked")
            #expect(asked.withLock { $0 } == PIN.maximumAttempts)
        }
    }

    @Test func aReplayedAssertionIsRefused() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            let recorder = Recorder()
            let ceremonies = try rig.ceremonies(url, recorder: recorder)
            _ = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            _ = try await ceremonies.login(email: nil, pin: goodPIN)
            let replay = try #require(recorder.body(of: "loginVerify"))
            let body = try JSONDecoder().decode(Components.Schemas.AuthenticationResponseJSON.self, from: Data(replay))
            let answer = try await generatedClient(url).loginVerify(body: .json(body))
            guard case .default(400, let problem) = answer else { Issue.record("replay accepted: \(answer)"); return }
            #expect(try problem.body.applicationProblemJson.code == "challenge_invalid")
        }
        #expect(try rig.auditActions().last == "sign_in.refused")
    }

    @Test func anAssertionOverAChallengeNeverIssuedIsRefused() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            let recorder = Recorder()
            let ceremonies = try rig.ceremonies(url, recorder: recorder)
            _ = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            _ = try await ceremonies.login(email: nil, pin: goodPIN)
            var body = try JSONDecoder().decode(Components.Schemas.AuthenticationResponseJSON.self, from: Data(recorder.body(of: "loginVerify")!))
            let forged = #"{"type":"webauthn.get","challenge":"bm90LWEtcmVhbC1jaGFsbGVuZ2U","origin":"https://localhost","crossOrigin":false}"#
            body.response.clientDataJSON = Base64URL.encode(Array(forged.utf8))
            let answer = try await generatedClient(url).loginVerify(body: .json(body))
            guard case .default(400, let problem) = answer else { Issue.record("accepted: \(answer)"); return }
            #expect(try problem.body.applicationProblemJson.code == "challenge_invalid")
        }
    }

    @Test func aServerWithAnotherOriginRefusesTheRegistration() async throws {
        let rig = try AuthRig(origin: "https://trading.example")
        try await rig.run { url in
            #expect(await raxxCode { _ = try await rig.ceremonies(url).register(email: "t@example.com", pin: goodPIN, code: rig.code) } == "origin_mismatch")
            let kept = try rig.keystore.load().onlyServer.credential
            #expect(kept == nil)  // nothing kept from a refused registration
        }
    }

    @Test func anExpiredAccessTokenIsRenewedSilently() async throws {
        let rig = try AuthRig(tokenTTL: .seconds(60), sessionTTL: .seconds(600))
        try await rig.run { url in
            let ceremonies = try rig.ceremonies(url)
            let first = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            rig.clock.advance(by: 90)
            let session = try await ceremonies.authenticatedClient.getSession().ok.body.json
            #expect(session.account.email == "t@example.com")
            let renewed = try #require(try rig.keystore.load().onlyServer.session)
            #expect(renewed.accessToken != first.accessToken)
            #expect(renewed.renewalToken != first.renewalToken)
            #expect(renewed.sessionExpiresAt == first.sessionExpiresAt)
            #expect(renewed.accessExpiresAt == rig.clock.now.addingTimeInterval(60))
        }
    }

    @Test func anEndedSessionNeedsSignInAgain() async throws {
        let rig = try AuthRig(tokenTTL: .seconds(60), sessionTTL: .seconds(120))
        try await rig.run { url in
            let ceremonies = try rig.ceremonies(url)
            _ = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            rig.clock.advance(by: 121)
            #expect(await raxxCode { _ = try await ceremonies.authenticatedClient.getSession() } == "sign_in_required")
            // A session revoked on the server while the client still has time is over too.
            _ = try await ceremonies.login(email: nil, pin: goodPIN)
            let tokens = try #require(try rig.keystore.load().onlyServer.session)
            _ = try await generatedClient(url, middlewares: [BearerToken(tokens.accessToken)]).logout()
            rig.clock.advance(by: 61)
            #expect(await raxxCode { _ = try await ceremonies.authenticatedClient.getSession() } == "sign_in_required")
            #expect(try rig.keystore.load().onlyServer.session == nil)
        }
        #expect(try rig.auditActions().contains("session.renewal_refused"))
    }

    @Test func stepUpGrantsAreBoundToTheActionAndSingleUse() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            let ceremonies = try rig.ceremonies(url)
            let session = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            let actionHash = Base64URL.encode([UInt8](repeating: 7, count: 32))
            let grant = try await ceremonies.stepUp(actionHash: actionHash, pin: goodPIN)
            #expect(grant.actionHash == actionHash)
            #expect(grant.expiresAt == rig.clock.now.addingTimeInterval(120))
            let service = RaptorService(database: rig.database, configuration: rig.configuration, clock: rig.clock.closure)
            let userID = try await rig.database.writer.read {
                try String.fetchOne($0, sql: "SELECT user_id FROM accounts WHERE id = ?", arguments: [session.accountID])!
            }
            let otherHash = Base64URL.encode([UInt8](repeating: 8, count: 32))
            let now = rig.clock.now
            let outcomes = try await rig.database.writer.write { db in
                [
                    try service.consumeStepUpGrant(db, grant: grant.grant, actionHash: otherHash, userID: userID, now: now),
                    try service.consumeStepUpGrant(db, grant: grant.grant, actionHash: actionHash, userID: "usr_other", now: now),
                    try service.consumeStepUpGrant(db, grant: grant.grant, actionHash: actionHash, userID: userID, now: now),
                    try service.consumeStepUpGrant(db, grant: grant.grant, actionHash: actionHash, userID: userID, now: now),
                ]
            }
            // Another action, another account: refused; the right one: once.
            #expect(outcomes == [false, false, true, false])
            #expect(await raxxCode { _ = try await ceremonies.stepUp(actionHash: actionHash, pin: badPIN) } == "wrong_pin")
        }
        #expect(try rig.auditActions().contains("step_up.granted"))
    }

    @Test func anOrdersStepUpGrantCannotPlaceAnotherOrder() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            let ceremonies = try rig.ceremonies(url)
            _ = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            func request(_ id: String, qty: Int64) -> Components.Schemas.OrderRequest {
                .init(
                    clientOrderId: id, symbol: "MSFT", side: .buy, qty: qty, _type: .market, tif: .day,
                    notAfter: rig.clock.now.addingTimeInterval(10), mode: .paper)
            }
            func hash(_ id: String, qty: Int64) -> String {
                OrderAction(clientOrderID: id, symbol: "MSFT", side: .buy, qty: qty, type: .market, limitPrice: nil, tif: .day, mode: .paper).hash
            }
            let client = ceremonies.authenticatedClient
            // Without a grant: step_up_required, naming the hash to bind.
            guard case .default(403, let asked) = try await client.placeOrder(body: .json(request("a", qty: 30))) else {
                Issue.record("a large order went through without a step-up"); return
            }
            #expect(try asked.body.applicationProblemJson.code == "step_up_required")
            #expect(try asked.body.applicationProblemJson.actionHash == hash("a", qty: 30))
            let grant = try await ceremonies.stepUp(actionHash: hash("a", qty: 30), pin: goodPIN).grant
            // Another order may not use it…
            guard case .default(403, let refused) = try await client.placeOrder(headers: .init(raxxStepUpGrant: grant), body: .json(request("b", qty: 31)))
            else {
                Issue.record("a grant placed another order"); return
            }
            #expect(try refused.body.applicationProblemJson.code == "step_up_invalid")
            // …its own order may, once.
            let placed = try await client.placeOrder(headers: .init(raxxStepUpGrant: grant), body: .json(request("a", qty: 30)))
            guard case .created(let created) = placed else { Issue.record("not placed: \(placed)"); return }
            #expect(try created.body.json.status == .filled)
            guard case .default(403, _) = try await client.placeOrder(headers: .init(raxxStepUpGrant: grant), body: .json(request("c", qty: 30))) else {
                Issue.record("a spent grant placed an order"); return
            }
        }
    }

    @Test func registrationOptionsTakenEarlyCannotHijackTheAccount() async throws {
        let rig = try AuthRig()
        try await rig.run { url in
            let client = try generatedClient(url)
            // The attacker asks for options for the victim's address: a code goes to the victim, and
            // no options to the attacker…
            let early = try await client.registerOptions(body: .json(.init(email: "victim@example.com")))
            guard case .accepted = early else { Issue.record("options without the emailed code: \(early)"); return }
            // …an attacker who read that code (over the victim's shoulder) takes options with it…
            let code = try rig.code("victim@example.com", 8)
            let options = try await client.registerOptions(body: .json(.init(email: "victim@example.com", code: code))).ok.body.json
            // …the victim registers (with a new code)…
            _ = try await rig.ceremonies(url).register(email: "victim@example.com", pin: goodPIN, code: rig.code)
            // …and the attacker's verification, over the earlier options, is refused.
            let clientData = ClientData.json(type: "webauthn.create", challenge: options.challenge, origin: APIEndpoint.clientOrigin(rpID: "localhost"))
            let made = try SoftwareAuthenticator.makeCredential(
                rpID: "localhost", userHandle: Base64URL.decode(options.user.id)!, email: "victim@example.com",
                clientDataHash: ClientData.hash(clientData), pin: SecretBytes(copying: Array("9999".utf8)),
                now: rig.clock.now, opsLimit: 1, memLimit: 8192)
            let id = Base64URL.encode(made.credentialID)
            let answer = try await client.registerVerify(
                body: .json(
                    .init(
                        id: id, rawId: id, _type: .publicKey,
                        response: .init(clientDataJSON: Base64URL.encode(clientData), attestationObject: Base64URL.encode(made.attestationObject)),
                        clientExtensionResults: .init())))
            guard case .default(409, let problem) = answer else { Issue.record("the hijack went through: \(answer)"); return }
            #expect(try problem.body.applicationProblemJson.code == "account_exists")
        }
    }

    @Test func hugeOrdersAreRefusedAndBuyingPowerCountsOpenOrders() async throws {
        let rig = try AuthRig(stepUpNotional: 1_000_000)
        try await rig.run { url in
            let ceremonies = try rig.ceremonies(url)
            _ = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            let client = ceremonies.authenticatedClient
            func limitBuy(_ id: String, qty: Int64, price: String) async throws -> Operations.PlaceOrder.Output {
                try await client.placeOrder(
                    body: .json(
                        .init(
                            clientOrderId: id, symbol: "SPY", side: .buy, qty: qty, _type: .limit,
                            limitPrice: price, tif: .gtc, notAfter: rig.clock.now.addingTimeInterval(10), mode: .paper)))
            }
            // An order whose value overflows is a 400, not a crash.
            guard case .default(400, _) = try await limitBuy("huge", qty: 1_000_000, price: "999999999.9999") else {
                Issue.record("an overflowing order was accepted"); return
            }
            // Two resting buys (far below the market) that together exceed the cash: the second is rejected.
            guard case .created(let first) = try await limitBuy("rest-1", qty: 60_000, price: "1.00") else { Issue.record("first"); return }
            #expect(try first.body.json.status == .open)
            guard case .created(let second) = try await limitBuy("rest-2", qty: 60_000, price: "1.00") else { Issue.record("second"); return }
            #expect(try second.body.json.status == .rejected)
            #expect(try second.body.json.rejectCode == "insufficient_buying_power")
            #expect(try await client.getHealth().ok.body.json.status == .ok)  // still up
        }
    }
}

extension KeystoreContents {
    /// The one server these tests sign in to.
    var onlyServer: ServerCredentials { servers.values.first ?? ServerCredentials() }
}

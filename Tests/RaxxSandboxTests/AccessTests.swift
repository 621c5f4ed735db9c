import Foundation
import GRDB
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import Testing

@testable import RaxxSandbox

/// Collects the operation IDs of everything `registerHandlers` registers.
final class OperationRecorder: ServerTransport, ServerMiddleware, @unchecked Sendable {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    private let lock = NSLock()
    private var handlers: [(HTTPRequest.Method, String, Handler)] = []
    private var ids: [String] = []

    struct Stop: Error {}

    func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    func register(_ handler: @escaping Handler, method: HTTPRequest.Method, path: String) throws {
        locked { handlers.append((method, path, handler)) }
    }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    )
        async throws -> (HTTPResponse, HTTPBody?)
    {
        locked { ids.append(operationID) }
        throw Stop()
    }

    /// Every operation ID of `APIProtocol`, as the generated server names them.
    static func operationIDs() async throws -> [String] {
        let recorder = OperationRecorder()
        let service = RaptorService(database: try SandboxDatabase(path: ":memory:"), configuration: SandboxConfiguration())
        try service.registerHandlers(on: recorder, middlewares: [recorder])
        for (method, path, handler) in recorder.locked({ recorder.handlers }) {
            _ = try? await handler(HTTPRequest(method: method, scheme: nil, authority: nil, path: path), nil, ServerRequestMetadata())
        }
        return recorder.locked { recorder.ids }
    }
}

@Suite struct AccessTests {
    @Test func theTableDeclaresEveryOperationOnce() async throws {
        let ids = try await OperationRecorder.operationIDs()
        #expect(ids.count == 42)
        #expect(Set(ids).count == ids.count)
        #expect(Set(ids) == Set(Access.table.keys))
    }

    @Test func theTableSaysWhatTheSandboxDoes() {
        let open = Access.table.filter { $0.value == .anonymous }.keys.sorted()
        #expect(open == ["getDSRReceiptKey", "getHealth", "loginOptions", "loginVerify", "registerVerify", "renewSession"])
        #expect(Access.table["registerOptions"] == .signedInIfToken)
        #expect(Access.table["placeOrder"] == .stepUp)
        #expect(Access.table["checkOrders"] == .signedIn)
        // Every data-subject operation but the public receipt key is staff only; applying also steps up.
        let staff = Access.table.filter { [.staff, .staffStepUp].contains($0.value) }.keys.sorted()
        #expect(
            staff == [
                "applyDSRErasure", "checkDSRErasurePlan", "closeDSRRequest", "confirmDSRExport", "createDSRRequest", "exportDSRData", "extendDSRRequest",
                "getDSRReceipt",
                "getDSRRequest", "listDSRRequests", "listSubjectAuditEvents", "planDSRErasure", "verifyDSRIdentity",
            ])
        #expect(Access.table["applyDSRErasure"] == .staffStepUp)
        #expect(Access.table["listAuditEvents"] == .signedIn)
    }

    @Test func anonymousCallsToSignedInOperationsAre401() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let gate = AccessGate(sessions: database.stores.sessions, clock: { Date() })
        for (id, access) in Access.table where ![.anonymous, .signedInIfToken].contains(access) {
            await #expect(throws: ProblemError.unauthorized, "\(id)") { try await gate.check(id, token: .some(nil)) }
            await #expect(throws: ProblemError.unauthorized, "\(id)") { try await gate.check(id, token: "not-a-token") }
        }
        for (id, access) in Access.table where access == .anonymous {
            #expect(try await gate.check(id, token: "not-a-token") == nil)
        }
    }

    @Test func theServiceRefusesAnonymousCallersBeforeAnyHandler() async throws {
        let service = RaptorService(database: try SandboxDatabase(path: ":memory:"), configuration: SandboxConfiguration())
        await #expect(throws: ProblemError.unauthorized) { _ = try await service.getPortfolio(.init()) }
        await #expect(throws: ProblemError.unauthorized) { _ = try await service.listEvents(.init()) }
        await #expect(throws: ProblemError.unauthorized) {
            _ = try await service.createDSRRequest(.init(body: .json(.init(email: "a@b.co", kind: .access, ticket: "T"))))
        }
        await #expect(throws: ProblemError.unauthorized) {
            _ = try await RequestIdentity.$bearerToken.withValue("nope") { try await service.listAuditEvents(.init()) }
        }
        #expect(try await service.getHealth(.init()).ok.body.json.status == .ok)
    }

    @Test func aSignedInCallerPassesAndIsKnown() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let gate = AccessGate(sessions: database.stores.sessions, clock: { Date() })
        let grant = try await signedInGrant(database, email: "t@example.com")
        let caller = try #require(try await gate.check(Operations.GetPortfolio.id, token: grant.accessToken))
        #expect(caller.accountID == grant.account.id)
        #expect(!caller.staff)
        // An optional sign-in: none without a token, the caller with one, 401 with a bad one.
        #expect(try await gate.check(Operations.RegisterOptions.id, token: .some(nil)) == nil)
        #expect(try await gate.check(Operations.RegisterOptions.id, token: grant.accessToken) == caller)
        await #expect(throws: ProblemError.unauthorized) { try await gate.check(Operations.RegisterOptions.id, token: "nope") }
    }

    @Test func expiredAndRevokedSessionsAreRefused() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let start = Date()
        let grant = try await signedInGrant(database, email: "t@example.com", now: start)
        let later = AccessGate(sessions: database.stores.sessions, clock: { start.addingTimeInterval(16 * 60) })
        await #expect(throws: ProblemError.sessionExpired) { try await later.check(Operations.GetSession.id, token: grant.accessToken) }
        let gate = AccessGate(sessions: database.stores.sessions, clock: { start })
        let caller = try await gate.caller(Operations.GetSession.id, token: grant.accessToken)
        try await database.stores.sessions.revoke(sessionID: caller.sessionID, userID: caller.userID, now: start)
        await #expect(throws: ProblemError.unauthorized) { try await gate.check(Operations.GetSession.id, token: grant.accessToken) }
    }

    @Test func staffOperationsRefuseEveryoneElse() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        var gate = AccessGate(sessions: database.stores.sessions, clock: { Date() })
        gate.table = ["staffThing": .staff, "openThing": .anonymous]
        let grant = try await signedInGrant(database, email: "t@example.com")
        await #expect(throws: ProblemError.unauthorized) { try await gate.check("staffThing", token: .some(nil)) }
        await #expect(throws: ProblemError.staffOnly) { try await gate.check("staffThing", token: grant.accessToken) }
        try await database.writer.write { db in try db.execute(sql: "UPDATE users SET staff = 1") }
        #expect(try await gate.check("staffThing", token: grant.accessToken)?.staff == true)
        // An operation the table does not know is refused, and a handler that needs a caller is
        // not run for an operation declared open.
        await #expect(throws: ProblemError.internalError) { try await gate.check("unknownThing", token: grant.accessToken) }
        await #expect(throws: ProblemError.internalError) { try await gate.caller("openThing", token: grant.accessToken) }
    }
}

extension AccessGate {
    func caller(_ operationID: String, token: String) async throws -> Caller {
        guard let caller = try await check(operationID, token: token) else { throw ProblemError.internalError }
        return caller
    }
}

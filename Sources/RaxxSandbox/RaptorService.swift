import Crypto
import Foundation
import GRDB
import RaxxAPI
import RaxxCore

/// The sandbox's implementation of the generated Raptor server protocol.
///
/// Capabilities land issue by issue; until one has, its paths answer `not_implemented` (501) as
/// problem+json, after the same authentication a real endpoint would ask for.
public struct RaptorService: APIProtocol {
    public let database: SandboxDatabase
    public let configuration: SandboxConfiguration
    public let market: Market
    public let clock: @Sendable () -> Date
    let faults: FaultInjector

    public init(database: SandboxDatabase, configuration: SandboxConfiguration,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.configuration = configuration
        self.market = Market(seed: configuration.marketSeed)
        self.clock = clock
        self.faults = FaultInjector(loseOrderReplies: configuration.loseOrderReplies)
    }

    // MARK: Who is asking

    /// The signed-in caller of this request.
    struct Caller: Sendable {
        var userID: String
        var accountID: String
        var sessionID: String
    }

    static func tokenHash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The caller behind the request's bearer token, or a 401 problem.
    func authenticate() async throws -> Caller {
        guard let token = RequestIdentity.bearerToken else { throw ProblemError.unauthorized }
        let now = clock().timeIntervalSince1970
        let row = try await database.writer.read { db in
            try Row.fetchOne(db, sql: """
                SELECT sessions.id, sessions.user_id, sessions.access_expires_at, sessions.expires_at, sessions.revoked_at,
                       accounts.id AS account_id
                FROM sessions JOIN accounts ON accounts.user_id = sessions.user_id
                WHERE sessions.access_token_hash = ?
                """, arguments: [Self.tokenHash(token)])
        }
        guard let row else { throw ProblemError.unauthorized }
        let revoked: Double? = row["revoked_at"]
        guard revoked == nil else { throw ProblemError.unauthorized }
        guard (row["access_expires_at"] as Double) > now, (row["expires_at"] as Double) > now else {
            throw ProblemError.sessionExpired
        }
        return Caller(userID: row["user_id"], accountID: row["account_id"], sessionID: row["id"])
    }

    // MARK: Meta

    public func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        // A health check that cannot read its database is not healthy.
        _ = try await database.writer.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
        return .ok(.init(body: .json(.init(status: .ok, version: RaxxVersion.current, time: clock()))))
    }

    // MARK: Alerts and push (raxx-notify)

    public func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output {
        _ = try await authenticate()
        throw ProblemError.notImplemented("alerts")
    }

    public func registerAPNsDevice(_ input: Operations.RegisterAPNsDevice.Input) async throws -> Operations.RegisterAPNsDevice.Output {
        _ = try await authenticate()
        throw ProblemError.notImplemented("push devices")
    }

    public func listAPNsDevices(_ input: Operations.ListAPNsDevices.Input) async throws -> Operations.ListAPNsDevices.Output {
        _ = try await authenticate()
        throw ProblemError.notImplemented("push devices")
    }

    public func revokeAPNsDevice(_ input: Operations.RevokeAPNsDevice.Input) async throws -> Operations.RevokeAPNsDevice.Output {
        _ = try await authenticate()
        throw ProblemError.notImplemented("push devices")
    }

    // MARK: Data-subject requests (raxx-dsr)

    public func createDSRExport(_ input: Operations.CreateDSRExport.Input) async throws -> Operations.CreateDSRExport.Output {
        _ = try await authenticate()
        throw ProblemError.notImplemented("data-subject exports")
    }

    public func planDSRErasure(_ input: Operations.PlanDSRErasure.Input) async throws -> Operations.PlanDSRErasure.Output {
        _ = try await authenticate()
        throw ProblemError.notImplemented("erasure plans")
    }

    public func executeDSRErasure(_ input: Operations.ExecuteDSRErasure.Input) async throws -> Operations.ExecuteDSRErasure.Output {
        _ = try await authenticate()
        throw ProblemError.notImplemented("erasure")
    }

    public func getDSRRequest(_ input: Operations.GetDSRRequest.Input) async throws -> Operations.GetDSRRequest.Output {
        _ = try await authenticate()
        throw ProblemError.notImplemented("data-subject requests")
    }

    // MARK: Audit

    public func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output {
        _ = try await authenticate()
        throw ProblemError.notImplemented("the audit trail")
    }
}

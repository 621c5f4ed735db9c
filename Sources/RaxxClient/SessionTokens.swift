import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxCore
import RaxxVault
import Synchronization

/// Hands out a valid access token for one server (by origin), renewing an expired one silently
/// with the session's renewal token (no person, no PIN), so cron jobs keep working for as long as
/// the session lives. A token is only ever handed out for the origin that issued it. Once the
/// session is over, callers get exit 4.
///
/// Renewal rotates the renewal token and replaces the access token, so it is serialised: within a
/// process, concurrent callers share one renewal (single flight); across processes, the keystore's
/// lock is held while the keystore is read again, and a token another process renewed meanwhile
/// is used as it is.
public struct SessionTokens: Sendable {
    public let keystore: any KeystoreAccess
    /// The API without the bearer middleware, for the renewal call itself.
    public let client: any APIProtocol
    /// The server's origin: whose session this is.
    public let origin: String
    public let clock: @Sendable () -> Date
    /// Renew this long before the access token lapses (at most a third of its lifetime), so it does
    /// not lapse in flight.
    public static let renewalMargin: TimeInterval = 30
    /// The session last read from the keystore by this value (and its copies): while its access
    /// token is good, requests carry it without reading and unsealing the keystore again. A token
    /// another process replaced meanwhile is refused by the server, and `renewed(since:)` reads
    /// the keystore again for the new one.
    private let memo = Memo()

    final class Memo: Sendable {
        private let session = Mutex<StoredSession?>(nil)
        var value: StoredSession? {
            get { session.withLock { $0 } }
            set { session.withLock { $0 = newValue } }
        }
    }

    public init(keystore: any KeystoreAccess, client: any APIProtocol, origin: String, clock: @escaping @Sendable () -> Date) {
        self.keystore = keystore
        self.client = client
        self.origin = origin
        self.clock = clock
    }

    /// "Not signed in to ORIGIN: raxx-auth login" (exit 4).
    public static func notSignedIn(_ origin: String) -> RaxxError {
        RaxxError(code: .signInRequired, message: "Not signed in to \(origin): raxx-auth login")
    }

    public func accessToken() async throws -> String {
        if let known = memo.value, known.sessionExpiresAt > clock(), needsNoRenewal(known) { return known.accessToken }
        let seen = try liveSession(try keystore.load())
        if needsNoRenewal(seen) {
            memo.value = seen
            return seen.accessToken
        }
        memo.value = nil
        return try await RenewalFlight.shared.run(key: keystore.location + "\n" + origin) {
            try await renew(seen: seen)
        }
    }

    /// The access token the keystore holds now, when it is another than `token` and still good:
    /// another process renewed the session while a request carried `token`.
    public func renewed(since token: String) throws -> String? {
        memo.value = nil
        guard let session = try keystore.load()[origin].session, session.accessToken != token,
            session.accessExpiresAt > clock(), session.sessionExpiresAt > clock()
        else { return nil }
        memo.value = session
        return session.accessToken
    }

    private func renew(seen: StoredSession) async throws -> String {
        try await keystore.withLock {
            var contents = try keystore.load()
            let current = try liveSession(contents)
            // Another process renewed while this one waited: its token is fresh, use it (renewing
            // again would replace the token that process is using right now).
            if current.renewalToken != seen.renewalToken, current.accessExpiresAt > clock() { return current.accessToken }
            if needsNoRenewal(current) { return current.accessToken }
            let output = try await client.renewSession(body: .json(.init(renewalToken: current.renewalToken)))
            switch output {
            case .ok(let ok):
                let grant = try ok.body.json
                contents[origin].session = StoredSession(grant: grant, signedInAt: current.signedInAt, receivedAt: clock())
                try keystore.save(contents)
                return grant.accessToken
            case .default(_, let answer):
                let problem = try answer.body.applicationProblemJson
                let error = ErrorMapping.raxxError(problem: problem)
                if error.status == .signInRequired {
                    contents[origin].session = nil  // the server ended it: forget the dead tokens
                    try keystore.save(contents)
                }
                throw error
            }
        }
    }

    /// The stored session for this origin, while it lives.
    private func liveSession(_ contents: KeystoreContents) throws(RaxxError) -> StoredSession {
        guard let session = contents[origin].session else { throw Self.notSignedIn(origin) }
        guard session.sessionExpiresAt > clock() else { throw RaxxError.signInRequired }
        return session
    }

    /// The access token is good for a while yet.
    private func needsNoRenewal(_ session: StoredSession) -> Bool {
        let left = session.accessExpiresAt.timeIntervalSince(clock())
        let lifetime = session.accessIssuedAt.map { session.accessExpiresAt.timeIntervalSince($0) } ?? .infinity
        return left > min(Self.renewalMargin, lifetime / 3)
    }
}

/// Concurrent renewals of one session within a process share one flight: the second caller waits
/// for the first one's outcome (a token, or the offline error) instead of queueing behind the
/// keystore's lock and renewing again.
actor RenewalFlight {
    static let shared = RenewalFlight()
    private var flights: [String: Task<String, any Error>] = [:]

    func run(key: String, _ renew: @escaping @Sendable () async throws -> String) async throws -> String {
        if let flight = flights[key] { return try await flight.value }
        let flight = Task { try await renew() }
        flights[key] = flight
        defer { flights[key] = nil }
        return try await flight.value
    }
}

/// Attaches the session's bearer token to every request. When the server refuses a token that
/// another process replaced meanwhile (renewal replaces the access token), the request is sent
/// once more with the new one.
public struct BearerTokenMiddleware: ClientMiddleware {
    let tokens: SessionTokens

    public init(tokens: SessionTokens) { self.tokens = tokens }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        let token = try await tokens.accessToken()
        request.headerFields[.authorization] = "Bearer \(token)"
        let answer = try await next(request, body, baseURL)
        guard answer.0.status == .unauthorized, body.map({ $0.iterationBehavior == .multiple }) ?? true,
            let newer = try tokens.renewed(since: token)
        else { return answer }
        request.headerFields[.authorization] = "Bearer \(newer)"
        return try await next(request, body, baseURL)
    }
}

extension StoredSession {
    init(grant: Components.Schemas.SessionGrant, signedInAt: Date, receivedAt: Date) {
        self.init(
            email: grant.account.email, accountID: grant.account.id, accessToken: grant.accessToken,
            accessExpiresAt: grant.expiresAt, renewalToken: grant.renewalToken,
            sessionExpiresAt: grant.sessionExpiresAt, signedInAt: signedInAt, accessIssuedAt: receivedAt)
    }
}

import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxCore
import RaxxHTTP
import RaxxVault

/// Hands out a valid access token, renewing an expired one silently with the session's renewal
/// token (no person, no PIN), so cron jobs keep working for as long as the session lives. Once the
/// session is over, callers get `RaxxError.signInRequired` (exit 4).
public struct SessionTokens: Sendable {
    public let keystore: any KeystoreAccess
    /// The API without the bearer middleware, for the renewal call itself.
    public let client: any APIProtocol
    public let clock: @Sendable () -> Date
    /// Renew this long before the access token lapses, so it does not lapse in flight.
    public static let renewalMargin: TimeInterval = 30

    public init(keystore: any KeystoreAccess, client: any APIProtocol, clock: @escaping @Sendable () -> Date) {
        self.keystore = keystore
        self.client = client
        self.clock = clock
    }

    public func accessToken() async throws -> String {
        if let token = try usableToken(try keystore.load()) { return token }
        // Two processes must not both spend the renewal token (it rotates): renew under the lock,
        // after reading the keystore again in case another process already has.
        return try await keystore.withLock {
            var contents = try keystore.load()
            if let token = try usableToken(contents) { return token }
            guard let session = contents.session else { throw RaxxError.signInRequired }
            let output = try await client.renewSession(body: .json(.init(renewalToken: session.renewalToken)))
            switch output {
            case .ok(let ok):
                let grant = try ok.body.json
                contents.session = StoredSession(grant: grant, signedInAt: session.signedInAt)
                try keystore.save(contents)
                return grant.accessToken
            case .default(_, let answer):
                let problem = try answer.body.applicationProblemJson
                let error = ErrorMapping.raxxError(problem: problem)
                if error.status == .signInRequired {
                    contents.session = nil // the server ended it: forget the dead tokens
                    try keystore.save(contents)
                }
                throw error
            }
        }
    }

    /// The stored access token if it is good for a while yet; nil when it needs renewing.
    private func usableToken(_ contents: KeystoreContents) throws(RaxxError) -> String? {
        guard let session = contents.session else { throw RaxxError.signInRequired }
        let now = clock()
        guard session.sessionExpiresAt > now else { throw RaxxError.signInRequired }
        return session.accessExpiresAt.timeIntervalSince(now) > Self.renewalMargin ? session.accessToken : nil
    }
}

/// Attaches the session's bearer token to every request.
public struct BearerTokenMiddleware: ClientMiddleware {
    let tokens: SessionTokens

    public init(tokens: SessionTokens) { self.tokens = tokens }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(try await tokens.accessToken())"
        return try await next(request, body, baseURL)
    }
}

extension StoredSession {
    init(grant: Components.Schemas.SessionGrant, signedInAt: Date) {
        self.init(email: grant.account.email, accountID: grant.account.id, accessToken: grant.accessToken,
                  accessExpiresAt: grant.expiresAt, renewalToken: grant.renewalToken,
                  sessionExpiresAt: grant.sessionExpiresAt, signedInAt: signedInAt)
    }
}

import Foundation
import RaxxAPI

/// Makes a session's tokens and grant. Tokens are random; the database keeps their hashes.
struct SessionMint: Sendable {
    let configuration: SandboxConfiguration

    struct Minted: Sendable {
        var session: NewSession
        var accessToken: String
        var renewalToken: String
    }

    func mint(now: Date, method: String) -> Minted {
        let access = Tokens.random(), renewal = Tokens.random()
        let sessionEnd = now.addingTimeInterval(configuration.sessionTTL.seconds)
        let accessEnd = min(now.addingTimeInterval(configuration.accessTokenTTL.seconds), sessionEnd)
        return Minted(
            session: NewSession(
                id: Identifier.make("ses"), accessTokenHash: Tokens.hash(access), accessExpiresAt: accessEnd,
                renewalTokenHash: Tokens.hash(renewal), expiresAt: sessionEnd, method: method),
            accessToken: access, renewalToken: renewal)
    }

    func grant(_ minted: Minted, account: Components.Schemas.Account) -> Components.Schemas.SessionGrant {
        .init(
            accessToken: minted.accessToken, tokenType: .bearer, expiresAt: minted.session.accessExpiresAt,
            renewalToken: minted.renewalToken, sessionExpiresAt: minted.session.expiresAt, account: account)
    }
}

/// The `session` tag: renewal, sign-out (which fires the session's dead man's switch) and the
/// current session.
struct SessionHandlers: Sendable {
    let sessions: SessionStore
    /// Signing out fires the session's dead man's switch at once.
    let switches: DeadManSwitches
    let configuration: SandboxConfiguration
    let clock: @Sendable () -> Date

    func renewSession(_ input: Operations.RenewSession.Input) async throws -> Operations.RenewSession.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let now = clock()
        let access = Tokens.random(), renewal = Tokens.random()
        let accessTTL = configuration.accessTokenTTL.seconds
        let outcome = try await sessions.renew(renewalTokenHash: Tokens.hash(body.renewalToken), now: now) { sessionEnd in
            RenewedTokens(
                accessTokenHash: Tokens.hash(access), accessExpiresAt: min(now.addingTimeInterval(accessTTL), sessionEnd),
                renewalTokenHash: Tokens.hash(renewal))
        }
        // A reused (spent) token answers as any refused one: sign in again. The session behind it
        // is revoked by now, whoever presented it.
        if outcome == .accountClosed { throw ProblemError.accountClosed }
        guard case .renewed(let sessionEnd, let account) = outcome else { throw ProblemError.sessionExpired }
        let accessEnd = min(now.addingTimeInterval(accessTTL), sessionEnd)
        return .ok(
            .init(
                body: .json(
                    .init(
                        accessToken: access, tokenType: .bearer, expiresAt: accessEnd, renewalToken: renewal,
                        sessionExpiresAt: sessionEnd, account: account))))
    }

    func logout(_ input: Operations.Logout.Input, caller: Caller) async throws -> Operations.Logout.Output {
        // The revocation and the switch's firing are one transaction: no order of the session slips
        // in behind the firing, and the background scan never finds the session revoked with its
        // switch still armed (it would tell the trader the session ended, not that it signed out).
        let logic = switches.logic, now = clock(), session = caller.sessionID
        try await sessions.revoke(sessionID: session, userID: caller.userID, now: now) { ledger in
            _ = try logic.fire(ledger, session: session, reason: .signedOut, now: now)
        }
        return .noContent(.init())
    }

    func getSession(_ input: Operations.GetSession.Input, caller: Caller) async throws -> Operations.GetSession.Output {
        guard let (times, account) = try await sessions.session(id: caller.sessionID, userID: caller.userID) else {
            throw ProblemError.unauthorized
        }
        return .ok(
            .init(
                body: .json(
                    .init(
                        account: account, createdAt: times.createdAt, expiresAt: times.accessExpiresAt,
                        sessionExpiresAt: times.expiresAt))))
    }

    /// Where the caller's account is signed in: its live sessions, the caller's own marked.
    func listSessions(_ input: Operations.ListSessions.Input, caller: Caller) async throws -> Operations.ListSessions.Output {
        let live = try await sessions.liveSessions(userID: caller.userID, now: clock())
        let listed = live.map { session in
            Components.Schemas.LiveSession(
                id: session.id, createdAt: session.times.createdAt, expiresAt: session.times.expiresAt,
                current: session.id == caller.sessionID)
        }
        return .ok(.init(body: .json(.init(sessions: listed))))
    }
}

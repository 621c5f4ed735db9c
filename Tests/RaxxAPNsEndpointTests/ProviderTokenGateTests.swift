import Crypto
import Foundation
import RaxxAPNs
import Testing

@testable import RaxxAPNsEndpoint

/// The provider token's rules: signature, key, team, age, refresh interval, a connection's key,
/// and the scripted expiry.
@Suite struct ProviderTokenGateTests {
    let team = Team()
    let now: Int64 = 1_750_000_000

    func reason(_ result: Result<ProviderTokenGate.Admission, PushRefusal>) -> APNsReason? {
        if case .failure(let refusal) = result { return refusal.reason }
        return nil
    }

    @Test func aFreshTokenIsAdmittedAndReused() throws {
        let gate = ProviderTokenGate(teamID: Team.teamID, keys: team.keys)
        let jwt = team.jwt(issuedAt: now - 10)
        let admission = try gate.admit(jwt, now: now, connectionKeyID: nil).get()
        #expect(admission.keyID == Team.keyID && admission.issuedAt == now - 10)
        for minute in 1...40 { #expect(reason(gate.admit(jwt, now: now + Int64(minute) * 60, connectionKeyID: Team.keyID)) == nil) }
    }

    @Test func signatureKeyAndTeam() {
        let gate = ProviderTokenGate(teamID: Team.teamID, keys: team.keys)
        #expect(reason(gate.admit(team.jwt(issuedAt: now, signer: team.otherKey), now: now, connectionKeyID: nil)) == .invalidProviderToken)
        #expect(reason(gate.admit(team.jwt(issuedAt: now, keyID: "UNKNOWNKEY"), now: now, connectionKeyID: nil)) == .invalidProviderToken)
        #expect(reason(gate.admit(team.jwt(issuedAt: now, teamID: "OTHERTEAM1"), now: now, connectionKeyID: nil)) == .invalidProviderToken)
        #expect(reason(gate.admit("not.a.jwt", now: now, connectionKeyID: nil)) == .invalidProviderToken)
        #expect(reason(gate.admit("garbage", now: now, connectionKeyID: nil)) == .invalidProviderToken)
        // A tampered signature fails however often it is presented (the verdict is cached).
        let jwt = team.jwt(issuedAt: now)
        let tampered = String(jwt.dropLast(2)) + (jwt.hasSuffix("AA") ? "BB" : "AA")
        for _ in 0..<3 { #expect(reason(gate.admit(tampered, now: now, connectionKeyID: nil)) == .invalidProviderToken) }
    }

    @Test func age() {
        let gate = ProviderTokenGate(teamID: Team.teamID, keys: team.keys)
        #expect(reason(gate.admit(team.jwt(issuedAt: now - 3601), now: now, connectionKeyID: nil)) == .expiredProviderToken)
        #expect(reason(gate.admit(team.jwt(issuedAt: now + 600), now: now, connectionKeyID: nil)) == .invalidProviderToken)
        // A token admitted while fresh expires an hour after its iat.
        let jwt = team.jwt(issuedAt: now)
        #expect(reason(gate.admit(jwt, now: now, connectionKeyID: nil)) == nil)
        #expect(reason(gate.admit(jwt, now: now + 3600, connectionKeyID: nil)) == nil)
        #expect(reason(gate.admit(jwt, now: now + 3601, connectionKeyID: nil)) == .expiredProviderToken)
    }

    @Test func aKeysTokenChangesAtMostEveryTwentyMinutes() {
        let gate = ProviderTokenGate(teamID: Team.teamID, keys: team.keys)
        #expect(reason(gate.admit(team.jwt(issuedAt: now), now: now, connectionKeyID: nil)) == nil)
        // A second token minted in the same second (two processes that did not share) is refused.
        #expect(reason(gate.admit(team.jwt(issuedAt: now), now: now + 1, connectionKeyID: nil)) == .tooManyProviderTokenUpdates)
        #expect(APNsReason.tooManyProviderTokenUpdates.status == 429)
        #expect(reason(gate.admit(team.jwt(issuedAt: now + 1199), now: now + 1199, connectionKeyID: nil)) == .tooManyProviderTokenUpdates)
        let next = team.jwt(issuedAt: now + 1200)
        #expect(reason(gate.admit(next, now: now + 1200, connectionKeyID: nil)) == nil)
        // The old token still works for streams already under way with it.
        #expect(reason(gate.admit(team.jwt(issuedAt: now + 1250), now: now + 1250, connectionKeyID: nil)) == .tooManyProviderTokenUpdates)
        #expect(reason(gate.admit(next, now: now + 1250, connectionKeyID: nil)) == nil)
    }

    @Test func aConnectionKeepsItsFirstKey() {
        let other = P256.Signing.PrivateKey()
        let gate = ProviderTokenGate(teamID: Team.teamID, keys: [Team.keyID: team.key.publicKey, "KEY2": other.publicKey])
        let second = team.jwt(issuedAt: now, keyID: "KEY2", signer: other)
        #expect(reason(gate.admit(second, now: now, connectionKeyID: Team.keyID)) == .unrelatedKeyIdInToken)
        #expect(reason(gate.admit(second, now: now, connectionKeyID: nil)) == nil)
    }

    @Test func scriptedExpiryAllowsExactlyOneRefresh() throws {
        let gate = ProviderTokenGate(teamID: Team.teamID, keys: team.keys, expireAfter: 3)
        let first = team.jwt(issuedAt: now)
        for _ in 0..<3 { gate.noteAccepted(try gate.admit(first, now: now, connectionKeyID: nil).get()) }
        #expect(reason(gate.admit(first, now: now + 5, connectionKeyID: nil)) == .expiredProviderToken)
        #expect(reason(gate.admit(first, now: now + 6, connectionKeyID: nil)) == .expiredProviderToken)
        // The refresh right after is exempt from the 20 minutes…
        let second = team.jwt(issuedAt: now + 7)
        #expect(reason(gate.admit(second, now: now + 7, connectionKeyID: nil)) == nil)
        // …but a second refresh is not.
        #expect(reason(gate.admit(team.jwt(issuedAt: now + 8), now: now + 8, connectionKeyID: nil)) == .tooManyProviderTokenUpdates)
        // Refused pushes do not count: only accepted ones are noted.
        for _ in 0..<2 { gate.noteAccepted(try gate.admit(second, now: now + 9, connectionKeyID: nil).get()) }
        #expect(reason(gate.admit(second, now: now + 10, connectionKeyID: nil)) == nil)
    }
}

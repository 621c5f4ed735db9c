import Crypto
import Foundation
import RaxxAPNs
import RaxxCore
import RaxxPush
import RaxxTestSupport
import Testing

/// Provider tokens: reused 20–50 minutes, refreshed once on expiry, shared between processes.
@Suite struct ProviderTokensTests {
    static let keyID = "KEY1234567"
    static let teamID = "TEAM123456"

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-push-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }

    @Test func reusesATokenUntilItIsFiftyMinutesOldThenMintsOne() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
        let raw = P256.Signing.PrivateKey().rawRepresentation
        let publicKey = try P256.Signing.PrivateKey(rawRepresentation: raw).publicKey
        let tokens = ProviderTokens(
            key: try P256.Signing.PrivateKey(rawRepresentation: raw), keyID: Self.keyID, teamID: Self.teamID,
            sharing: nil, clock: clock.closure)
        let first = try await tokens.current()
        clock.advance(by: 49 * 60 + 59)
        #expect(try await tokens.current() == first)
        #expect(await tokens.minted == 1)
        clock.advance(by: 1)
        let second = try await tokens.current()
        #expect(second.token != first.token && second.mintedAt == first.mintedAt + 50 * 60)
        #expect(await tokens.minted == 2)
        // What is minted verifies as APNs reads it: kid, iss, iat, ES256 under the key.
        let verified = try ProviderToken.verify(second.token) { $0 == Self.keyID ? publicKey : nil }
        #expect(verified.teamID == Self.teamID && verified.issuedAt == second.mintedAt)
    }

    /// What a sender's thread reads without the actor follows the same age rules as `current()`.
    @Test func theTokenReadWithoutTheActorIsTheKeptOneWhileItMayBePresented() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
        let tokens = ProviderTokens(key: P256.Signing.PrivateKey(), keyID: Self.keyID, teamID: Self.teamID, sharing: nil, clock: clock.closure)
        #expect(tokens.usableNow() == nil)
        let first = try await tokens.current()
        #expect(tokens.usableNow() == first)
        clock.advance(by: 49 * 60 + 59)
        #expect(tokens.usableNow() == first)
        clock.advance(by: 1)
        #expect(tokens.usableNow() == nil)
        let second = try await tokens.current()
        #expect(second != first && tokens.usableNow() == second)
        // A clock set back more than a minute: not presented until current() has minted anew.
        clock.advance(by: -120)
        #expect(tokens.usableNow() == nil)
    }

    @Test func anExpiredTokenIsReplacedOnceWhateverHowManyStreamsSayIt() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
        let tokens = ProviderTokens(key: P256.Signing.PrivateKey(), keyID: Self.keyID, teamID: Self.teamID, sharing: nil, clock: clock.closure)
        let stale = try await tokens.current()
        clock.advance(by: 60)
        // Fifty streams answered ExpiredProviderToken to the same token at once: one mint.
        let fresh = await withTaskGroup(of: KeptToken?.self, returning: Set<String>.self) { group in
            for _ in 0..<50 { group.addTask { try? await tokens.refresh(replacing: stale) } }
            var seen = Set<String>()
            for await token in group { if let token { seen.insert(token.token) } }
            return seen
        }
        #expect(fresh.count == 1 && !fresh.contains(stale.token))
        #expect(await tokens.minted == 2)
        // The replacement is itself refused at once: no second mint within 20 minutes of it.
        let replacement = try await tokens.current()
        #expect(replacement.afterExpiry)
        clock.advance(by: 19 * 60)
        #expect(try await tokens.refresh(replacing: replacement) == nil)
        #expect(await tokens.minted == 2)
        clock.advance(by: 60)
        #expect(try await tokens.refresh(replacing: replacement) != nil)
        #expect(await tokens.minted == 3)
    }

    @Test func twoInstancesShareOneTokenThroughThe0600File() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
        let raw = P256.Signing.PrivateKey().rawRepresentation
        let file = TokenFile(stateDirectory: folder, teamID: Self.teamID, keyID: Self.keyID)
        // Two dispatchers (as two processes would: separate instances, one file).
        let a = ProviderTokens(
            key: try P256.Signing.PrivateKey(rawRepresentation: raw), keyID: Self.keyID, teamID: Self.teamID, sharing: file, clock: clock.closure)
        let b = ProviderTokens(
            key: try P256.Signing.PrivateKey(rawRepresentation: raw), keyID: Self.keyID, teamID: Self.teamID, sharing: file, clock: clock.closure)
        let fromA = try await a.current()
        clock.advance(by: 10 * 60)
        let fromB = try await b.current()
        #expect(fromA == fromB)
        #expect(await a.minted == 1)
        #expect(await b.minted == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // B meets the expiry first and refreshes; A, told the same later, takes B's token.
        clock.advance(by: 15 * 60)
        let refreshed = try #require(try await b.refresh(replacing: fromB))
        let adopted = try #require(try await a.refresh(replacing: fromA))
        #expect(adopted == refreshed)
        #expect(await a.minted == 1)
        #expect(await b.minted == 1)
        // Fifty minutes after B's mint, the first to ask mints and the other adopts.
        clock.advance(by: 50 * 60)
        let next = try await a.current()
        #expect(try await b.current() == next)
        #expect(await a.minted == 2)
        #expect(await b.minted == 1)
    }

    @Test func aSharedTokenFromAnotherKeyIsNotUsed() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
        let file = TokenFile(stateDirectory: folder, teamID: Self.teamID, keyID: Self.keyID)
        let old = ProviderTokens(key: P256.Signing.PrivateKey(), keyID: Self.keyID, teamID: Self.teamID, sharing: file, clock: clock.closure)
        let rotated = ProviderTokens(key: P256.Signing.PrivateKey(), keyID: Self.keyID, teamID: Self.teamID, sharing: file, clock: clock.closure)
        let fromOld = try await old.current()
        let fromRotated = try await rotated.current()
        #expect(fromOld.token != fromRotated.token)
        #expect(await rotated.minted == 1)
    }

    @Test func aKeyFileOthersCanReadIsRefusedWith77AndABadOneWith65() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = P256.Signing.PrivateKey()
        let path = folder.appendingPathComponent("AuthKey.p8").path
        try key.pemRepresentation.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o644)
        #expect(throws: RaxxError.self) { try ProviderKey.load(path: path) }
        do { _ = try ProviderKey.load(path: path) } catch { #expect(error.status == .notPermitted && error.hint?.contains("chmod 600") == true) }
        chmod(path, 0o600)
        let loaded = try ProviderKey.load(path: path)
        #expect(loaded.publicKey.rawRepresentation == key.publicKey.rawRepresentation)

        try "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        do { _ = try ProviderKey.load(path: path); Issue.record("a bad key was taken") } catch { #expect(error.status == .dataError) }
        do { _ = try ProviderKey.load(path: path + ".missing"); Issue.record("a missing key was taken") } catch { #expect(error.status == .dataError) }
    }
}

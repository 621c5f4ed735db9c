import Foundation
import RaxxCLI
import RaxxCore
import RaxxTestSupport
import RaxxVault
import Testing

/// Whose data a command shows: the account the keystore holds, found without unsealing the
/// keystore whenever the marker naming it is newer than the keystore.
@Suite struct LocalAccountTests {
    static let origin = "https://api.raxx.app"

    static func session(_ account: String) -> StoredSession {
        StoredSession(
            email: "t@example.com", accountID: account, accessToken: "access-secret",
            accessExpiresAt: Date(timeIntervalSince1970: 1_800_000_000), renewalToken: "renewal-secret",
            sessionExpiresAt: Date(timeIntervalSince1970: 1_800_003_600), signedInAt: Date(timeIntervalSince1970: 1_799_999_000))
    }

    static func keystore(_ account: String?) -> KeystoreContents {
        KeystoreContents(servers: account.map { [origin: ServerCredentials(session: session($0))] } ?? [:])
    }

    @Test func theKeystoreIsUnsealedOnlyWhenItChangedSinceTheMarker() throws {
        let world = TestWorld()
        let keystore = MemoryKeystore(Self.keystore("acc_b"))
        world.keystore = keystore
        world.accounts = MemoryLocalAccounts(current: "acc_a")  // a marker older than the keystore
        let context = try world.context(tool: "t", requirement: .offlineCapable, format: .json)

        // The keystore changed since: it is read, and the account signed in is adopted.
        #expect(try context.localAccount() == "acc_b")
        #expect(try keystore.loads == 1 && world.accounts.marked()?.account == "acc_b")
        // The marker is newer now: nothing is unsealed.
        #expect(try context.localAccount() == "acc_b")
        #expect(try context.localAccount() == "acc_b")
        #expect(keystore.loads == 1)

        // A renewal rewrites the keystore (same account): read once, the marker confirmed.
        try keystore.save(Self.keystore("acc_b"))
        #expect(try context.localAccount() == "acc_b")
        #expect(try context.localAccount() == "acc_b")
        #expect(keystore.loads == 2)

        // A sign-in cut short after its keystore write, before its marker: the keystore wins.
        try keystore.save(Self.keystore("acc_c"))
        #expect(try context.localAccount() == "acc_c")
        #expect(try keystore.loads == 3 && world.accounts.marked()?.account == "acc_c")

        // Signed out: the last account signed in is still the one shown.
        try keystore.save(Self.keystore(nil))
        #expect(try context.localAccount() == "acc_c")
        #expect(try context.localAccount() == "acc_c")
        #expect(keystore.loads == 4)
    }

    @Test func withoutAKeystoreTheMarkerIsTrusted() throws {
        let world = TestWorld()
        let keystore = MemoryKeystore()
        try keystore.destroy()
        world.keystore = keystore
        world.accounts = MemoryLocalAccounts(current: "acc_a")
        let context = try world.context(tool: "t", requirement: .offlineCapable, format: .json)
        #expect(try context.localAccount() == "acc_a")
        #expect(keystore.loads == 0)
    }
}

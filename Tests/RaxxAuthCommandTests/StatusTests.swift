import Foundation
import RaxxCore
import RaxxTestSupport
import RaxxVault
import RaxxWire
import Testing

@testable import RaxxAuthCommand

/// `raxx-auth status` in-process: the keystore alone, never the network.
@Suite struct StatusTests {
    @Test func signedInPrintsTheSessionAndNoToken() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        #expect(try await world.run(RaxxAuth.Status.self) == .ok)
        let line = try #require(world.jsonLines.first)
        #expect(line["signed_in"] as? Bool == true)
        #expect(line["account"] as? String == Fixtures.email)
        #expect((line["keystore"] as? String)?.hasPrefix("memory:keystore/") == true)
        #expect(!world.stdout.contents.contains("access-1") && !world.stdout.contents.contains("renewal-1"))
        #expect(world.api.calls.isEmpty)
    }

    @Test func notSignedInExits4WithAHint() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxAuth.Status.self, ["--format", "text"]) == .signInRequired)
        #expect(world.stderr.contents.contains("Not signed in to https://api.raxx.app."))
        #expect(world.stderr.contents.contains("raxx-auth register"))
    }

    @Test func anEndedSessionSaysWhenItEnded() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now.addingTimeInterval(13 * 3600))
        world.keystore = Fixtures.signedIn()
        #expect(try await world.run(RaxxAuth.Status.self, ["--json"]) == .signInRequired)
        #expect(world.stderr.contents.contains("The session at https://api.raxx.app ended at"))
        #expect(world.jsonLines.first?["signed_in"] as? Bool == false)
    }

    @Test func listsEveryServerTheConfiguredOneFirst() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = MemoryKeystore(
            KeystoreContents(servers: [
                "http://127.0.0.1:8080": ServerCredentials(session: Fixtures.session()),
                "https://staging.raxx.app": ServerCredentials(session: Fixtures.session(sessionFor: -1)),
            ]))
        #expect(try await world.run(RaxxAuth.Status.self) == .signInRequired)  // not signed in to the configured one
        #expect(world.jsonLines.map { $0["server"] as? String } == ["https://api.raxx.app", "http://127.0.0.1:8080", "https://staging.raxx.app"])
        #expect(world.jsonLines.map { $0["signed_in"] as? Bool } == [false, true, false])
        #expect(world.stderr.contents.contains("Not signed in to https://api.raxx.app."))
    }

    /// Through the Encodable overload, whatever else the value conforms to.
    static func encoded<T: Encodable>(_ value: T) throws -> String { try JSONLines.line(value) }

    @Test func theRecordWritesWhatItsEncodableConformanceWrites() throws {
        let records = [
            SessionRecord(
                server: "https://api.raxx.app", signedIn: true, account: "trader@example.com", accountID: "acc_1",
                accessExpiresAt: Date(timeIntervalSince1970: 1_795_000_000.25), sessionExpiresAt: Date(timeIntervalSince1970: 1_795_086_400),
                keystore: "/home/trader/.local/state/raxx/keystore", passkey: true, authenticator: "software"),
            SessionRecord(
                server: "http://127.0.0.1:8080", signedIn: false, account: nil, accountID: nil, accessExpiresAt: nil,
                sessionExpiresAt: nil, keystore: "/tmp/raxx \"home\"/keystore", passkey: false, authenticator: nil),
        ]
        for record in records {
            #expect(JSONLines.line(written: record) == (try Self.encoded(record)))
        }
    }
}

import Foundation
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxNotifyCommand
import RaxxTestSupport
import Testing

/// `raxx-notify devices` in-process: opt-in, validated before anything is sent.
@Suite struct NotifyDevicesTests {
    static let token = String(repeating: "ab12", count: 16)

    func world() -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stores = MemoryStores()
        return world
    }

    @Test func addsADeviceAndShowsOnlyTheTokensSuffix() async throws {
        let world = world()
        world.api.onRegisterAPNsDevice { input in
            guard case .json(let registration) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            #expect(registration.token == Self.token && registration.alerts == [.fillConfirmed, .orderRejected])
            return .created(
                .init(
                    body: .json(
                        .init(
                            id: "dev-1", environment: .sandbox, tokenSuffix: String(Self.token.suffix(8)),
                            label: registration.label, alerts: registration.alerts ?? [], createdAt: Fixtures.now))))
        }
        #expect(
            try await world.run(
                RaxxNotify.Devices.Add.self,
                [
                    "--token", Self.token, "--environment", "sandbox",
                    "--alerts", "order_rejected,fill_confirmed", "--label", "phone",
                ]) == .ok)
        let line = try #require(world.jsonLines.first)
        #expect(line["token_suffix"] as? String == "ab12ab12")
        #expect(!world.stdout.contents.contains(Self.token))
    }

    @Test(arguments: [
        (["--token", "xyz", "--environment", "sandbox"], "field 'token'"),
        (["--token", String(repeating: "a", count: 63), "--environment", "sandbox"], "field 'token'"),
        // Full-width digits are hex digits to `Character`, not to APNs (nor to the server).
        (["--token", String(repeating: "ab\u{FF11}\u{FF12}", count: 16), "--environment", "sandbox"], "field 'token'"),
        (["--token", token, "--environment", "staging"], "field 'environment'"),
        (["--token", token, "--environment", "sandbox", "--alerts", "price_alert"], "field 'alerts'"),
    ])
    func badInputExits65NamingTheFieldAndSendsNothing(arguments: [String], field: String) async throws {
        let world = world()
        #expect(try await world.run(RaxxNotify.Devices.Add.self, arguments + ["--format", "text"]) == .dataError)
        #expect(world.stderr.contents.contains(field))
        #expect(world.api.calls.isEmpty)
    }

    @Test func offlineAddExits69() async throws {
        let world = world()
        world.api.onRegisterAPNsDevice { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused") }
        #expect(try await world.run(RaxxNotify.Devices.Add.self, ["--token", Self.token, "--environment", "production"]) == .unavailable)
        #expect(world.stdout.contents.isEmpty)
    }

    @Test func listsAndRemoves() async throws {
        let world = world()
        world.api.onListAPNsDevices { _ in
            .ok(
                .init(
                    body: .json(
                        .init(devices: [
                            .init(id: "dev-1", environment: .production, tokenSuffix: "ab12ab12", alerts: [.securityAlert], createdAt: Fixtures.now)
                        ]))))
        }
        world.api.onRevokeAPNsDevice { input in
            input.path.deviceId == "dev-1" ? .noContent(.init()) : .default(statusCode: 404, Fixtures.problem(404, code: "not_found", title: "No such device."))
        }
        #expect(try await world.run(RaxxNotify.Devices.List.self) == .ok)
        #expect(world.jsonLines.first?["id"] as? String == "dev-1")
        #expect(try await world.run(RaxxNotify.Devices.Remove.self, ["dev-1"]) == .ok)
        #expect(try await world.run(RaxxNotify.Devices.Remove.self, ["dev-9", "--format", "text"]) == .failure)
        #expect(world.stderr.contents.contains("No such device."))
    }
}

import Foundation
import GRDB
import HTTPTypes
import RaxxAPI
import RaxxCore
import RaxxSandboxTestSupport
import RaxxTestSupport
import Testing

@testable import RaxxSandbox

extension HandlerRig {
    func register(
        _ caller: Caller, token: String, environment: Components.Schemas.DeviceRegistration.EnvironmentPayload = .sandbox,
        label: String? = nil, alerts: [Components.Schemas.EventType]? = nil
    ) async throws -> Components.Schemas.Device {
        try await devices.registerAPNsDevice(
            .init(body: .json(.init(token: token, environment: environment, label: label, alerts: alerts))),
            caller: caller
        ).created.body.json
    }

    func activeDevices(_ caller: Caller) async throws -> [Components.Schemas.Device] {
        try await devices.listAPNsDevices(.init(), caller: caller).ok.body.json.devices
    }
}

/// A 64-digit APNs token ending in `tail`.
func apnsToken(_ tail: String = "0badcafe") -> String {
    String(repeating: "a1", count: 32 - tail.count / 2) + tail
}

@Suite struct DeviceTests {
    @Test func aDeviceAnswersOnlyItsTokensSuffix() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let token = apnsToken("0BADCAFE")
        let device = try await rig.register(caller, token: token, label: "Phone")
        #expect(device.tokenSuffix == "0badcafe")
        #expect(device.environment == .sandbox && device.label == "Phone" && device.createdAt == HandlerRig.now)
        // Every alert type by default, order_cancelled among them.
        #expect(device.alerts == Components.Schemas.EventType.allCases)
        #expect(device.alerts == [.fillConfirmed, .orderRejected, .orderCancelled, .sessionExpiring, .securityAlert])
        #expect(device.id.hasPrefix("dev_"))
        // No answer carries the whole token.
        let encoded = String(decoding: try JSONEncoder().encode(device), as: UTF8.self)
        #expect(!encoded.lowercased().contains(token.lowercased()))
        #expect(try await rig.activeDevices(caller) == [device])
        // The platform keeps the whole token (lowercase), with its creation and revocation times.
        let stored = try await rig.database.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT token, created_at, revoked_at FROM device_tokens WHERE id = ?", arguments: [device.id])
        }
        #expect(stored?["token"] == token.lowercased())
        #expect(stored?["created_at"] == HandlerRig.now.timeIntervalSince1970)
        #expect((stored?["revoked_at"] as Double?) == nil)
        // The audit trail has the suffix, never the token.
        let trail = try await rig.auditTrail()
        let registered = try #require(trail.last)
        #expect(registered.action == "device.registered")
        #expect(registered.details["token_suffix"] == "0badcafe" && registered.details["device_id"] == device.id)
        #expect(!trail.contains { $0.details.values.contains { $0.lowercased().contains(token.lowercased()) } })
    }

    @Test func alertsAreTheOnesAskedFor() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let device = try await rig.register(caller, token: apnsToken(), environment: .production, alerts: [.fillConfirmed, .securityAlert, .fillConfirmed])
        #expect(device.alerts == [.fillConfirmed, .securityAlert])
        #expect(device.environment == .production)
        let none = try await rig.register(caller, token: apnsToken("11112222"), alerts: [])
        #expect(none.alerts.isEmpty)
    }

    @Test func validationRefusals() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        for bad in [
            "", String(repeating: "a", count: 63), String(repeating: "a", count: 201), String(repeating: "g", count: 64),
            String(repeating: "a", count: 63) + " ", String(repeating: "é", count: 64),
        ] {
            let refused = await problem { _ = try await rig.register(caller, token: bad) }
            #expect(refused?.status == 400 && refused?.code == .badRequest, "\(bad)")
            #expect(refused?.detail?.contains("'token'") == true, "\(bad)")
        }
        #expect(try await rig.register(caller, token: String(repeating: "F", count: 200)).tokenSuffix == "ffffffff")
        let label = await problem { _ = try await rig.register(caller, token: apnsToken(), label: String(repeating: "x", count: 65)) }
        #expect(label?.status == 400 && label?.detail?.contains("'label'") == true)
        #expect(try await rig.register(caller, token: apnsToken(), label: String(repeating: "x", count: 64)).label?.count == 64)
        #expect(try await rig.activeDevices(caller).count == 2)
    }

    @Test func theSameTokenAgainAnswersTheSameDeviceReactivated() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let first = try await rig.register(caller, token: apnsToken(), label: "Old")
        let again = try await rig.register(caller, token: apnsToken().uppercased(), label: "New", alerts: [.sessionExpiring])
        #expect(again.id == first.id && again.createdAt == first.createdAt)
        #expect(again.label == "New" && again.alerts == [.sessionExpiring])
        #expect(try await rig.activeDevices(caller).map(\.id) == [first.id])
        _ = try await rig.devices.revokeAPNsDevice(.init(path: .init(deviceId: first.id)), caller: caller)
        #expect(try await rig.activeDevices(caller).isEmpty)
        let back = try await rig.register(caller, token: apnsToken())
        #expect(back.id == first.id)
        #expect(try await rig.activeDevices(caller).map(\.id) == [first.id])
        let trail = try await rig.auditTrail().filter { $0.action.hasPrefix("device.") }
        #expect(trail.map(\.action) == ["device.registered", "device.registered", "device.revoked", "device.registered"])
        #expect(trail.last?.details["reactivated"] == "true")
        // Another user with the same token has a device of their own.
        let (other, _) = try await rig.signIn("other@example.com")
        let theirs = try await rig.register(other, token: apnsToken())
        #expect(theirs.id != first.id)
        #expect(try await rig.activeDevices(other).map(\.id) == [theirs.id])
    }

    @Test func revokeIsForOnesOwnDevices() async throws {
        let rig = try HandlerRig()
        let (alice, _) = try await rig.signIn("alice@example.com")
        let (bob, _) = try await rig.signIn("bob@example.com")
        let device = try await rig.register(alice, token: apnsToken())
        let kept = try await rig.register(alice, token: apnsToken("33334444"))
        let stranger = await problem { _ = try await rig.devices.revokeAPNsDevice(.init(path: .init(deviceId: device.id)), caller: bob) }
        #expect(stranger?.status == 404 && stranger?.code == .notFound)
        let unknown = await problem { _ = try await rig.devices.revokeAPNsDevice(.init(path: .init(deviceId: "dev_nope")), caller: alice) }
        #expect(unknown?.status == 404)
        #expect(try await rig.activeDevices(alice).count == 2)
        let output = try await rig.devices.revokeAPNsDevice(.init(path: .init(deviceId: device.id)), caller: alice)
        #expect(output == .noContent(.init()))
        #expect(try await rig.activeDevices(alice).map(\.id) == [kept.id])
        // Again: 204, and nothing more changes or is audited.
        #expect(try await rig.devices.revokeAPNsDevice(.init(path: .init(deviceId: device.id)), caller: alice) == .noContent(.init()))
        let revocations = try await rig.auditTrail().filter { $0.action == "device.revoked" }
        #expect(revocations.count == 1)
        #expect(revocations.first?.details["device_id"] == device.id && revocations.first?.details["token_suffix"] == "0badcafe")
        let revokedAt = try await rig.database.writer.read { db in
            try Double.fetchOne(db, sql: "SELECT revoked_at FROM device_tokens WHERE id = ?", arguments: [device.id])
        }
        #expect(revokedAt == HandlerRig.now.timeIntervalSince1970)
        #expect(try await rig.activeDevices(bob).isEmpty)
    }
}

/// Devices over HTTP: the generated decoder's refusals name the field, and answers carry no token.
@Suite struct DeviceHTTPTests {
    @Test func registerListRevoke() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        let auth = ["Authorization": "Bearer \(grant.accessToken)"]
        let token = apnsToken()
        try await withSandbox(database: database) { url in
            let (created, body) = try await httpCall(
                url, .post, "/api/devices/apns", headers: auth,
                body: #"{"token":"\#(token)","environment":"sandbox","label":"Phone"}"#)
            #expect(created.status.code == 201)
            #expect(body.contains("token_suffix") && body.contains("0badcafe") && !body.contains(token))
            let client = try generatedClient(url, middlewares: [BearerToken(grant.accessToken)])
            let devices = try await client.listAPNsDevices().ok.body.json.devices
            #expect(devices.map(\.tokenSuffix) == ["0badcafe"])
            let (listed, listBody) = try await httpCall(url, .get, "/api/devices/apns", headers: auth)
            #expect(listed.status.code == 200 && !listBody.contains(token))

            let refusals: [(String, String)] = [
                (#"{"token":"xyz","environment":"sandbox"}"#, "'token'"),
                (#"{"token":"\#(token)","environment":"staging"}"#, "'environment'"),
                (#"{"token":"\#(token)","environment":"sandbox","alerts":["fill_confirmed","price_moved"]}"#, "'alerts"),
                (#"{"environment":"sandbox"}"#, "'token'"),
            ]
            for (request, named) in refusals {
                let (response, problem) = try await httpCall(url, .post, "/api/devices/apns", headers: auth, body: request)
                #expect(response.status.code == 400, "\(request)")
                #expect(response.headerFields[.contentType] == "application/problem+json")
                #expect(problem.contains(named), "\(request): \(problem)")
            }

            let id = try #require(devices.first?.id)
            #expect(try await httpCall(url, .delete, "/api/devices/apns/dev_nope", headers: auth).0.status.code == 404)
            #expect(try await httpCall(url, .delete, "/api/devices/apns/\(id)", headers: auth).0.status.code == 204)
            #expect(try await client.listAPNsDevices().ok.body.json.devices.isEmpty)
            // Signed out: 401.
            #expect(try await httpCall(url, .get, "/api/devices/apns").0.status.code == 401)
        }
    }
}

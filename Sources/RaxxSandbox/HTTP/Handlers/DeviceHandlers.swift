import Foundation
import RaxxAPI
import RaxxDomain

/// The `devices` tag: APNs registrations for push alerts. The whole token is kept (it is what a
/// push is sent to) and never answered: a device shows only the token's last 8 characters.
struct DeviceHandlers: Sendable {
    let devices: DeviceStore
    let clock: @Sendable () -> Date

    /// The alerts a device gets when its registration names none: every type there is, from the
    /// type's own list (a list written out here once missed order_cancelled).
    static let allAlerts = Components.Schemas.EventType.allCases
    static let maxLabel = 64

    /// Registers the caller's device (201). The same token again answers the same device (its ID
    /// and creation time), re-activated if it was revoked, with the label, environment and alerts
    /// of this registration. Tokens are kept in lowercase.
    func registerAPNsDevice(_ input: Operations.RegisterAPNsDevice.Input, caller: Caller) async throws -> Operations.RegisterAPNsDevice.Output {
        guard case .json(let r) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        guard DeviceToken.isRegistrable(r.token) else {
            throw ProblemError.badRequest("Field 'token' must be 64 to 200 hexadecimal characters.")
        }
        if let label = r.label, label.unicodeScalars.count > Self.maxLabel {
            throw ProblemError.badRequest("Field 'label' must be at most \(Self.maxLabel) characters.")
        }
        // Unknown alert types and environments are refused by the generated decoder (400 naming
        // the field); repeated ones count once.
        let alerts = EventHandlers.distinct((r.alerts ?? Self.allAlerts).map(\.rawValue))
        let registered = try await devices.register(
            NewDevice(
                id: Identifier.make("dev"), user: caller.userID, token: r.token.lowercased(),
                environment: r.environment.rawValue, label: r.label, alerts: alerts,
                at: clock()))
        return .created(.init(body: .json(registered.device)))
    }

    /// The caller's active devices, oldest first.
    func listAPNsDevices(_ input: Operations.ListAPNsDevices.Input, caller: Caller) async throws -> Operations.ListAPNsDevices.Output {
        .ok(.init(body: .json(.init(devices: try await devices.activeDevices(user: caller.userID)))))
    }

    /// Revokes one of the caller's devices (204; again for one revoked already). Anyone else's
    /// device, or an unknown ID, is 404.
    func revokeAPNsDevice(_ input: Operations.RevokeAPNsDevice.Input, caller: Caller) async throws -> Operations.RevokeAPNsDevice.Output {
        let id = input.path.deviceId
        guard try await devices.revoke(id: id, user: caller.userID, now: clock()) else { throw ProblemError.notFound("No device \(id).") }
        return .noContent(.init())
    }
}

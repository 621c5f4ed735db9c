import Foundation
import RaxxAPI

/// The `devices` tag (push).
/// Not landed yet: answers 501 `not_implemented` once `AccessGate` has let the caller in (signed in, per
/// `Access.table`).
struct DeviceHandlers: Sendable {
    func registerAPNsDevice(_ input: Operations.RegisterAPNsDevice.Input, caller: Caller) async throws -> Operations.RegisterAPNsDevice.Output {
        throw ProblemError.notImplemented("push devices")
    }

    func listAPNsDevices(_ input: Operations.ListAPNsDevices.Input, caller: Caller) async throws -> Operations.ListAPNsDevices.Output {
        throw ProblemError.notImplemented("push devices")
    }

    func revokeAPNsDevice(_ input: Operations.RevokeAPNsDevice.Input, caller: Caller) async throws -> Operations.RevokeAPNsDevice.Output {
        throw ProblemError.notImplemented("push devices")
    }
}

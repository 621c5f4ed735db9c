import Foundation
import RaxxAPI

/// The `events` tag (raxx-notify's alerts).
/// Not landed yet: answers 501 `not_implemented` once `AccessGate` has let the caller in (signed in, per
/// `Access.table`).
struct EventHandlers: Sendable {
    func listEvents(_ input: Operations.ListEvents.Input, caller: Caller) async throws -> Operations.ListEvents.Output {
        throw ProblemError.notImplemented("alerts")
    }
}

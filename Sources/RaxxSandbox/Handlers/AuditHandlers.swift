import Foundation
import RaxxAPI

/// The `audit` tag.
/// Not landed yet: answers 501 `not_implemented` once `AccessGate` has let the caller in (signed in, per
/// `Access.table`).
struct AuditHandlers: Sendable {
    func listAuditEvents(_ input: Operations.ListAuditEvents.Input, caller: Caller) async throws -> Operations.ListAuditEvents.Output {
        throw ProblemError.notImplemented("the audit trail")
    }
}

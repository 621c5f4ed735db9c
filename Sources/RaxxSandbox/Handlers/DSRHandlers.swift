import Foundation
import RaxxAPI

/// The `dsr` tag (raxx-dsr's data-subject requests).
/// Not landed yet: answers 501 `not_implemented` once `AccessGate` has let the caller in (signed in, per
/// `Access.table`).
struct DSRHandlers: Sendable {
    func createDSRExport(_ input: Operations.CreateDSRExport.Input, caller: Caller) async throws -> Operations.CreateDSRExport.Output {
        throw ProblemError.notImplemented("data-subject exports")
    }

    func planDSRErasure(_ input: Operations.PlanDSRErasure.Input, caller: Caller) async throws -> Operations.PlanDSRErasure.Output {
        throw ProblemError.notImplemented("erasure plans")
    }

    func executeDSRErasure(_ input: Operations.ExecuteDSRErasure.Input, caller: Caller) async throws -> Operations.ExecuteDSRErasure.Output {
        throw ProblemError.notImplemented("erasure")
    }

    func getDSRRequest(_ input: Operations.GetDSRRequest.Input, caller: Caller) async throws -> Operations.GetDSRRequest.Output {
        throw ProblemError.notImplemented("data-subject requests")
    }
}

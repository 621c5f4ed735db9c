import OpenAPIRuntime
import RaxxAPI
import RaxxCore

/// A generated operation's output, whose `default` case is a problem+json answer. Every
/// operation's output is one (each declares `default` as the Problem response), which gives every
/// call site one way from an answer to the error a person sees: `try await api.x().checked().ok`.
public protocol ProblemAnswering {
    /// The problem answer; throws when the answer is another one.
    var `default`: Components.Responses.Problem { get throws }
}

extension ProblemAnswering {
    /// The answer itself when it is not a problem; otherwise throws the problem as the error a
    /// person sees (`ErrorMapping.raxxError(problem:)`).
    public func checked() throws -> Self {
        guard let problem = try? self.default else { return self }
        throw try problem.raxxError
    }
}

extension Operations.GetHealth.Output: ProblemAnswering {}
extension Operations.RegisterOptions.Output: ProblemAnswering {}
extension Operations.RegisterVerify.Output: ProblemAnswering {}
extension Operations.ListPasskeys.Output: ProblemAnswering {}
extension Operations.ConfirmDSRExport.Output: ProblemAnswering {}
extension Operations.RemovePasskey.Output: ProblemAnswering {}
extension Operations.LoginOptions.Output: ProblemAnswering {}
extension Operations.LoginVerify.Output: ProblemAnswering {}
extension Operations.StepUpOptions.Output: ProblemAnswering {}
extension Operations.StepUpVerify.Output: ProblemAnswering {}
extension Operations.RenewSession.Output: ProblemAnswering {}
extension Operations.Logout.Output: ProblemAnswering {}
extension Operations.GetSession.Output: ProblemAnswering {}
extension Operations.GetPortfolio.Output: ProblemAnswering {}
extension Operations.GetSyncChanges.Output: ProblemAnswering {}
extension Operations.GetSyncSummary.Output: ProblemAnswering {}
extension Operations.GetInstruments.Output: ProblemAnswering {}
extension Operations.ListOrders.Output: ProblemAnswering {}
extension Operations.PlaceOrder.Output: ProblemAnswering {}
extension Operations.CheckOrders.Output: ProblemAnswering {}
extension Operations.GetOrder.Output: ProblemAnswering {}
extension Operations.CancelOrder.Output: ProblemAnswering {}
extension Operations.CancelOrdersAfter.Output: ProblemAnswering {}
extension Operations.ListEvents.Output: ProblemAnswering {}
extension Operations.ListAPNsDevices.Output: ProblemAnswering {}
extension Operations.RegisterAPNsDevice.Output: ProblemAnswering {}
extension Operations.RevokeAPNsDevice.Output: ProblemAnswering {}
extension Operations.CreateDSRRequest.Output: ProblemAnswering {}
extension Operations.ListDSRRequests.Output: ProblemAnswering {}
extension Operations.GetDSRRequest.Output: ProblemAnswering {}
extension Operations.VerifyDSRIdentity.Output: ProblemAnswering {}
extension Operations.ExtendDSRRequest.Output: ProblemAnswering {}
extension Operations.CloseDSRRequest.Output: ProblemAnswering {}
extension Operations.ExportDSRData.Output: ProblemAnswering {}
extension Operations.PlanDSRErasure.Output: ProblemAnswering {}
extension Operations.CheckDSRErasurePlan.Output: ProblemAnswering {}
extension Operations.ApplyDSRErasure.Output: ProblemAnswering {}
extension Operations.GetDSRReceipt.Output: ProblemAnswering {}
extension Operations.GetDSRReceiptKey.Output: ProblemAnswering {}
extension Operations.ListSubjectAuditEvents.Output: ProblemAnswering {}
extension Operations.ListAuditEvents.Output: ProblemAnswering {}

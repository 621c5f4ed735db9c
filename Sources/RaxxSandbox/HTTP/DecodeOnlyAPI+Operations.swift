// Written by Scripts/gen-operations from Spec/openapi.yaml: do not edit (Scripts/check compares).
import RaxxAPI

extension DecodeOnlyAPI {
    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output { throw Decoded() }
    func registerOptions(_ input: Operations.RegisterOptions.Input) async throws -> Operations.RegisterOptions.Output { throw Decoded() }
    func registerVerify(_ input: Operations.RegisterVerify.Input) async throws -> Operations.RegisterVerify.Output { throw Decoded() }
    func loginOptions(_ input: Operations.LoginOptions.Input) async throws -> Operations.LoginOptions.Output { throw Decoded() }
    func loginVerify(_ input: Operations.LoginVerify.Input) async throws -> Operations.LoginVerify.Output { throw Decoded() }
    func stepUpOptions(_ input: Operations.StepUpOptions.Input) async throws -> Operations.StepUpOptions.Output { throw Decoded() }
    func stepUpVerify(_ input: Operations.StepUpVerify.Input) async throws -> Operations.StepUpVerify.Output { throw Decoded() }
    func listPasskeys(_ input: Operations.ListPasskeys.Input) async throws -> Operations.ListPasskeys.Output { throw Decoded() }
    func removePasskey(_ input: Operations.RemovePasskey.Input) async throws -> Operations.RemovePasskey.Output { throw Decoded() }
    func renewSession(_ input: Operations.RenewSession.Input) async throws -> Operations.RenewSession.Output { throw Decoded() }
    func logout(_ input: Operations.Logout.Input) async throws -> Operations.Logout.Output { throw Decoded() }
    func getSession(_ input: Operations.GetSession.Input) async throws -> Operations.GetSession.Output { throw Decoded() }
    func listSessions(_ input: Operations.ListSessions.Input) async throws -> Operations.ListSessions.Output { throw Decoded() }
    func getPortfolio(_ input: Operations.GetPortfolio.Input) async throws -> Operations.GetPortfolio.Output { throw Decoded() }
    func getSyncChanges(_ input: Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output { throw Decoded() }
    func getSyncSummary(_ input: Operations.GetSyncSummary.Input) async throws -> Operations.GetSyncSummary.Output { throw Decoded() }
    func getInstruments(_ input: Operations.GetInstruments.Input) async throws -> Operations.GetInstruments.Output { throw Decoded() }
    func listOrders(_ input: Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output { throw Decoded() }
    func placeOrder(_ input: Operations.PlaceOrder.Input) async throws -> Operations.PlaceOrder.Output { throw Decoded() }
    func checkOrders(_ input: Operations.CheckOrders.Input) async throws -> Operations.CheckOrders.Output { throw Decoded() }
    func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output { throw Decoded() }
    func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output { throw Decoded() }
    func cancelOrdersAfter(_ input: Operations.CancelOrdersAfter.Input) async throws -> Operations.CancelOrdersAfter.Output { throw Decoded() }
    func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output { throw Decoded() }
    func listAPNsDevices(_ input: Operations.ListAPNsDevices.Input) async throws -> Operations.ListAPNsDevices.Output { throw Decoded() }
    func registerAPNsDevice(_ input: Operations.RegisterAPNsDevice.Input) async throws -> Operations.RegisterAPNsDevice.Output { throw Decoded() }
    func revokeAPNsDevice(_ input: Operations.RevokeAPNsDevice.Input) async throws -> Operations.RevokeAPNsDevice.Output { throw Decoded() }
    func listDSRRequests(_ input: Operations.ListDSRRequests.Input) async throws -> Operations.ListDSRRequests.Output { throw Decoded() }
    func createDSRRequest(_ input: Operations.CreateDSRRequest.Input) async throws -> Operations.CreateDSRRequest.Output { throw Decoded() }
    func getDSRRequest(_ input: Operations.GetDSRRequest.Input) async throws -> Operations.GetDSRRequest.Output { throw Decoded() }
    func verifyDSRIdentity(_ input: Operations.VerifyDSRIdentity.Input) async throws -> Operations.VerifyDSRIdentity.Output { throw Decoded() }
    func extendDSRRequest(_ input: Operations.ExtendDSRRequest.Input) async throws -> Operations.ExtendDSRRequest.Output { throw Decoded() }
    func closeDSRRequest(_ input: Operations.CloseDSRRequest.Input) async throws -> Operations.CloseDSRRequest.Output { throw Decoded() }
    func exportDSRData(_ input: Operations.ExportDSRData.Input) async throws -> Operations.ExportDSRData.Output { throw Decoded() }
    func confirmDSRExport(_ input: Operations.ConfirmDSRExport.Input) async throws -> Operations.ConfirmDSRExport.Output { throw Decoded() }
    func checkDSRErasurePlan(_ input: Operations.CheckDSRErasurePlan.Input) async throws -> Operations.CheckDSRErasurePlan.Output { throw Decoded() }
    func planDSRErasure(_ input: Operations.PlanDSRErasure.Input) async throws -> Operations.PlanDSRErasure.Output { throw Decoded() }
    func applyDSRErasure(_ input: Operations.ApplyDSRErasure.Input) async throws -> Operations.ApplyDSRErasure.Output { throw Decoded() }
    func getDSRReceipt(_ input: Operations.GetDSRReceipt.Input) async throws -> Operations.GetDSRReceipt.Output { throw Decoded() }
    func getDSRReceiptKey(_ input: Operations.GetDSRReceiptKey.Input) async throws -> Operations.GetDSRReceiptKey.Output { throw Decoded() }
    func listSubjectAuditEvents(_ input: Operations.ListSubjectAuditEvents.Input) async throws -> Operations.ListSubjectAuditEvents.Output { throw Decoded() }
    func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output { throw Decoded() }
}

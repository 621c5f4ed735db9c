// Written by Scripts/gen-operations from Spec/openapi.yaml: do not edit (Scripts/check compares).
import RaxxAPI

/// Every operation of the spec: through the gate to its tag's handler (`AccessGate.forward`).
extension RaptorService {
    // MARK: meta

    public func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        try await gate.forward(Operations.GetHealth.id, input, to: meta.getHealth)
    }

    // MARK: auth

    public func registerOptions(_ input: Operations.RegisterOptions.Input) async throws -> Operations.RegisterOptions.Output {
        try await gate.forward(Operations.RegisterOptions.id, input, to: auth.registerOptions)
    }

    public func registerVerify(_ input: Operations.RegisterVerify.Input) async throws -> Operations.RegisterVerify.Output {
        try await gate.forward(Operations.RegisterVerify.id, input, to: auth.registerVerify)
    }

    public func loginOptions(_ input: Operations.LoginOptions.Input) async throws -> Operations.LoginOptions.Output {
        try await gate.forward(Operations.LoginOptions.id, input, to: auth.loginOptions)
    }

    public func loginVerify(_ input: Operations.LoginVerify.Input) async throws -> Operations.LoginVerify.Output {
        try await gate.forward(Operations.LoginVerify.id, input, to: auth.loginVerify)
    }

    public func stepUpOptions(_ input: Operations.StepUpOptions.Input) async throws -> Operations.StepUpOptions.Output {
        try await gate.forward(Operations.StepUpOptions.id, input, to: auth.stepUpOptions)
    }

    public func stepUpVerify(_ input: Operations.StepUpVerify.Input) async throws -> Operations.StepUpVerify.Output {
        try await gate.forward(Operations.StepUpVerify.id, input, to: auth.stepUpVerify)
    }

    public func listPasskeys(_ input: Operations.ListPasskeys.Input) async throws -> Operations.ListPasskeys.Output {
        try await gate.forward(Operations.ListPasskeys.id, input, to: auth.listPasskeys)
    }

    public func removePasskey(_ input: Operations.RemovePasskey.Input) async throws -> Operations.RemovePasskey.Output {
        try await gate.forward(Operations.RemovePasskey.id, input, to: auth.removePasskey)
    }

    // MARK: session

    public func renewSession(_ input: Operations.RenewSession.Input) async throws -> Operations.RenewSession.Output {
        try await gate.forward(Operations.RenewSession.id, input, to: session.renewSession)
    }

    public func logout(_ input: Operations.Logout.Input) async throws -> Operations.Logout.Output {
        try await gate.forward(Operations.Logout.id, input, to: session.logout)
    }

    public func getSession(_ input: Operations.GetSession.Input) async throws -> Operations.GetSession.Output {
        try await gate.forward(Operations.GetSession.id, input, to: session.getSession)
    }

    public func listSessions(_ input: Operations.ListSessions.Input) async throws -> Operations.ListSessions.Output {
        try await gate.forward(Operations.ListSessions.id, input, to: session.listSessions)
    }

    // MARK: read

    public func getPortfolio(_ input: Operations.GetPortfolio.Input) async throws -> Operations.GetPortfolio.Output {
        try await gate.forward(Operations.GetPortfolio.id, input, to: read.getPortfolio)
    }

    public func getSyncChanges(_ input: Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output {
        try await gate.forward(Operations.GetSyncChanges.id, input, to: read.getSyncChanges)
    }

    public func getSyncSummary(_ input: Operations.GetSyncSummary.Input) async throws -> Operations.GetSyncSummary.Output {
        try await gate.forward(Operations.GetSyncSummary.id, input, to: read.getSyncSummary)
    }

    // MARK: instruments

    public func getInstruments(_ input: Operations.GetInstruments.Input) async throws -> Operations.GetInstruments.Output {
        try await gate.forward(Operations.GetInstruments.id, input, to: instruments.getInstruments)
    }

    // MARK: orders

    public func listOrders(_ input: Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output {
        try await gate.forward(Operations.ListOrders.id, input, to: orders.listOrders)
    }

    public func placeOrder(_ input: Operations.PlaceOrder.Input) async throws -> Operations.PlaceOrder.Output {
        try await gate.forward(Operations.PlaceOrder.id, input, to: orders.placeOrder)
    }

    public func checkOrders(_ input: Operations.CheckOrders.Input) async throws -> Operations.CheckOrders.Output {
        try await gate.forward(Operations.CheckOrders.id, input, to: orders.checkOrders)
    }

    public func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output {
        try await gate.forward(Operations.GetOrder.id, input, to: orders.getOrder)
    }

    public func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output {
        try await gate.forward(Operations.CancelOrder.id, input, to: orders.cancelOrder)
    }

    public func cancelOrdersAfter(_ input: Operations.CancelOrdersAfter.Input) async throws -> Operations.CancelOrdersAfter.Output {
        try await gate.forward(Operations.CancelOrdersAfter.id, input, to: orders.cancelOrdersAfter)
    }

    // MARK: events

    public func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output {
        try await gate.forward(Operations.ListEvents.id, input, to: events.listEvents)
    }

    // MARK: devices

    public func listAPNsDevices(_ input: Operations.ListAPNsDevices.Input) async throws -> Operations.ListAPNsDevices.Output {
        try await gate.forward(Operations.ListAPNsDevices.id, input, to: devices.listAPNsDevices)
    }

    public func registerAPNsDevice(_ input: Operations.RegisterAPNsDevice.Input) async throws -> Operations.RegisterAPNsDevice.Output {
        try await gate.forward(Operations.RegisterAPNsDevice.id, input, to: devices.registerAPNsDevice)
    }

    public func revokeAPNsDevice(_ input: Operations.RevokeAPNsDevice.Input) async throws -> Operations.RevokeAPNsDevice.Output {
        try await gate.forward(Operations.RevokeAPNsDevice.id, input, to: devices.revokeAPNsDevice)
    }

    // MARK: dsr

    public func listDSRRequests(_ input: Operations.ListDSRRequests.Input) async throws -> Operations.ListDSRRequests.Output {
        try await gate.forward(Operations.ListDSRRequests.id, input, to: dsr.listDSRRequests)
    }

    public func createDSRRequest(_ input: Operations.CreateDSRRequest.Input) async throws -> Operations.CreateDSRRequest.Output {
        try await gate.forward(Operations.CreateDSRRequest.id, input, to: dsr.createDSRRequest)
    }

    public func getDSRRequest(_ input: Operations.GetDSRRequest.Input) async throws -> Operations.GetDSRRequest.Output {
        try await gate.forward(Operations.GetDSRRequest.id, input, to: dsr.getDSRRequest)
    }

    public func verifyDSRIdentity(_ input: Operations.VerifyDSRIdentity.Input) async throws -> Operations.VerifyDSRIdentity.Output {
        try await gate.forward(Operations.VerifyDSRIdentity.id, input, to: dsr.verifyDSRIdentity)
    }

    public func extendDSRRequest(_ input: Operations.ExtendDSRRequest.Input) async throws -> Operations.ExtendDSRRequest.Output {
        try await gate.forward(Operations.ExtendDSRRequest.id, input, to: dsr.extendDSRRequest)
    }

    public func closeDSRRequest(_ input: Operations.CloseDSRRequest.Input) async throws -> Operations.CloseDSRRequest.Output {
        try await gate.forward(Operations.CloseDSRRequest.id, input, to: dsr.closeDSRRequest)
    }

    public func exportDSRData(_ input: Operations.ExportDSRData.Input) async throws -> Operations.ExportDSRData.Output {
        try await gate.forward(Operations.ExportDSRData.id, input, to: dsr.exportDSRData)
    }

    public func confirmDSRExport(_ input: Operations.ConfirmDSRExport.Input) async throws -> Operations.ConfirmDSRExport.Output {
        try await gate.forward(Operations.ConfirmDSRExport.id, input, to: dsr.confirmDSRExport)
    }

    public func checkDSRErasurePlan(_ input: Operations.CheckDSRErasurePlan.Input) async throws -> Operations.CheckDSRErasurePlan.Output {
        try await gate.forward(Operations.CheckDSRErasurePlan.id, input, to: dsr.checkDSRErasurePlan)
    }

    public func planDSRErasure(_ input: Operations.PlanDSRErasure.Input) async throws -> Operations.PlanDSRErasure.Output {
        try await gate.forward(Operations.PlanDSRErasure.id, input, to: dsr.planDSRErasure)
    }

    public func applyDSRErasure(_ input: Operations.ApplyDSRErasure.Input) async throws -> Operations.ApplyDSRErasure.Output {
        try await gate.forward(Operations.ApplyDSRErasure.id, input, to: dsr.applyDSRErasure)
    }

    public func getDSRReceipt(_ input: Operations.GetDSRReceipt.Input) async throws -> Operations.GetDSRReceipt.Output {
        try await gate.forward(Operations.GetDSRReceipt.id, input, to: dsr.getDSRReceipt)
    }

    public func getDSRReceiptKey(_ input: Operations.GetDSRReceiptKey.Input) async throws -> Operations.GetDSRReceiptKey.Output {
        try await gate.forward(Operations.GetDSRReceiptKey.id, input, to: dsr.getDSRReceiptKey)
    }

    public func listSubjectAuditEvents(_ input: Operations.ListSubjectAuditEvents.Input) async throws -> Operations.ListSubjectAuditEvents.Output {
        try await gate.forward(Operations.ListSubjectAuditEvents.id, input, to: dsr.listSubjectAuditEvents)
    }

    // MARK: audit

    public func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output {
        try await gate.forward(Operations.ListAuditEvents.id, input, to: audit.listAuditEvents)
    }
}

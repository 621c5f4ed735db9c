// Written by Scripts/gen-operations from Spec/openapi.yaml: do not edit (Scripts/check compares).
import RaxxAPI

extension StubAPI {
    /// Plans the answer to `getHealth`.
    public func onGetHealth(_ answer: @escaping @Sendable (Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output) {
        plan(Operations.GetHealth.id, answer)
    }

    /// Plans the answer to `registerOptions`.
    public func onRegisterOptions(_ answer: @escaping @Sendable (Operations.RegisterOptions.Input) async throws -> Operations.RegisterOptions.Output) {
        plan(Operations.RegisterOptions.id, answer)
    }

    /// Plans the answer to `registerVerify`.
    public func onRegisterVerify(_ answer: @escaping @Sendable (Operations.RegisterVerify.Input) async throws -> Operations.RegisterVerify.Output) {
        plan(Operations.RegisterVerify.id, answer)
    }

    /// Plans the answer to `loginOptions`.
    public func onLoginOptions(_ answer: @escaping @Sendable (Operations.LoginOptions.Input) async throws -> Operations.LoginOptions.Output) {
        plan(Operations.LoginOptions.id, answer)
    }

    /// Plans the answer to `loginVerify`.
    public func onLoginVerify(_ answer: @escaping @Sendable (Operations.LoginVerify.Input) async throws -> Operations.LoginVerify.Output) {
        plan(Operations.LoginVerify.id, answer)
    }

    /// Plans the answer to `stepUpOptions`.
    public func onStepUpOptions(_ answer: @escaping @Sendable (Operations.StepUpOptions.Input) async throws -> Operations.StepUpOptions.Output) {
        plan(Operations.StepUpOptions.id, answer)
    }

    /// Plans the answer to `stepUpVerify`.
    public func onStepUpVerify(_ answer: @escaping @Sendable (Operations.StepUpVerify.Input) async throws -> Operations.StepUpVerify.Output) {
        plan(Operations.StepUpVerify.id, answer)
    }

    /// Plans the answer to `listPasskeys`.
    public func onListPasskeys(_ answer: @escaping @Sendable (Operations.ListPasskeys.Input) async throws -> Operations.ListPasskeys.Output) {
        plan(Operations.ListPasskeys.id, answer)
    }

    /// Plans the answer to `removePasskey`.
    public func onRemovePasskey(_ answer: @escaping @Sendable (Operations.RemovePasskey.Input) async throws -> Operations.RemovePasskey.Output) {
        plan(Operations.RemovePasskey.id, answer)
    }

    /// Plans the answer to `renewSession`.
    public func onRenewSession(_ answer: @escaping @Sendable (Operations.RenewSession.Input) async throws -> Operations.RenewSession.Output) {
        plan(Operations.RenewSession.id, answer)
    }

    /// Plans the answer to `logout`.
    public func onLogout(_ answer: @escaping @Sendable (Operations.Logout.Input) async throws -> Operations.Logout.Output) {
        plan(Operations.Logout.id, answer)
    }

    /// Plans the answer to `getSession`.
    public func onGetSession(_ answer: @escaping @Sendable (Operations.GetSession.Input) async throws -> Operations.GetSession.Output) {
        plan(Operations.GetSession.id, answer)
    }

    /// Plans the answer to `listSessions`.
    public func onListSessions(_ answer: @escaping @Sendable (Operations.ListSessions.Input) async throws -> Operations.ListSessions.Output) {
        plan(Operations.ListSessions.id, answer)
    }

    /// Plans the answer to `getPortfolio`.
    public func onGetPortfolio(_ answer: @escaping @Sendable (Operations.GetPortfolio.Input) async throws -> Operations.GetPortfolio.Output) {
        plan(Operations.GetPortfolio.id, answer)
    }

    /// Plans the answer to `getSyncChanges`.
    public func onGetSyncChanges(_ answer: @escaping @Sendable (Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output) {
        plan(Operations.GetSyncChanges.id, answer)
    }

    /// Plans the answer to `getSyncSummary`.
    public func onGetSyncSummary(_ answer: @escaping @Sendable (Operations.GetSyncSummary.Input) async throws -> Operations.GetSyncSummary.Output) {
        plan(Operations.GetSyncSummary.id, answer)
    }

    /// Plans the answer to `getInstruments`.
    public func onGetInstruments(_ answer: @escaping @Sendable (Operations.GetInstruments.Input) async throws -> Operations.GetInstruments.Output) {
        plan(Operations.GetInstruments.id, answer)
    }

    /// Plans the answer to `listOrders`.
    public func onListOrders(_ answer: @escaping @Sendable (Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output) {
        plan(Operations.ListOrders.id, answer)
    }

    /// Plans the answer to `placeOrder`.
    public func onPlaceOrder(_ answer: @escaping @Sendable (Operations.PlaceOrder.Input) async throws -> Operations.PlaceOrder.Output) {
        plan(Operations.PlaceOrder.id, answer)
    }

    /// Plans the answer to `checkOrders`.
    public func onCheckOrders(_ answer: @escaping @Sendable (Operations.CheckOrders.Input) async throws -> Operations.CheckOrders.Output) {
        plan(Operations.CheckOrders.id, answer)
    }

    /// Plans the answer to `getOrder`.
    public func onGetOrder(_ answer: @escaping @Sendable (Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output) {
        plan(Operations.GetOrder.id, answer)
    }

    /// Plans the answer to `cancelOrder`.
    public func onCancelOrder(_ answer: @escaping @Sendable (Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output) {
        plan(Operations.CancelOrder.id, answer)
    }

    /// Plans the answer to `cancelOrdersAfter`.
    public func onCancelOrdersAfter(_ answer: @escaping @Sendable (Operations.CancelOrdersAfter.Input) async throws -> Operations.CancelOrdersAfter.Output) {
        plan(Operations.CancelOrdersAfter.id, answer)
    }

    /// Plans the answer to `listEvents`.
    public func onListEvents(_ answer: @escaping @Sendable (Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output) {
        plan(Operations.ListEvents.id, answer)
    }

    /// Plans the answer to `listAPNsDevices`.
    public func onListAPNsDevices(_ answer: @escaping @Sendable (Operations.ListAPNsDevices.Input) async throws -> Operations.ListAPNsDevices.Output) {
        plan(Operations.ListAPNsDevices.id, answer)
    }

    /// Plans the answer to `registerAPNsDevice`.
    public func onRegisterAPNsDevice(_ answer: @escaping @Sendable (Operations.RegisterAPNsDevice.Input) async throws -> Operations.RegisterAPNsDevice.Output) {
        plan(Operations.RegisterAPNsDevice.id, answer)
    }

    /// Plans the answer to `revokeAPNsDevice`.
    public func onRevokeAPNsDevice(_ answer: @escaping @Sendable (Operations.RevokeAPNsDevice.Input) async throws -> Operations.RevokeAPNsDevice.Output) {
        plan(Operations.RevokeAPNsDevice.id, answer)
    }

    /// Plans the answer to `listDSRRequests`.
    public func onListDSRRequests(_ answer: @escaping @Sendable (Operations.ListDSRRequests.Input) async throws -> Operations.ListDSRRequests.Output) {
        plan(Operations.ListDSRRequests.id, answer)
    }

    /// Plans the answer to `createDSRRequest`.
    public func onCreateDSRRequest(_ answer: @escaping @Sendable (Operations.CreateDSRRequest.Input) async throws -> Operations.CreateDSRRequest.Output) {
        plan(Operations.CreateDSRRequest.id, answer)
    }

    /// Plans the answer to `getDSRRequest`.
    public func onGetDSRRequest(_ answer: @escaping @Sendable (Operations.GetDSRRequest.Input) async throws -> Operations.GetDSRRequest.Output) {
        plan(Operations.GetDSRRequest.id, answer)
    }

    /// Plans the answer to `verifyDSRIdentity`.
    public func onVerifyDSRIdentity(_ answer: @escaping @Sendable (Operations.VerifyDSRIdentity.Input) async throws -> Operations.VerifyDSRIdentity.Output) {
        plan(Operations.VerifyDSRIdentity.id, answer)
    }

    /// Plans the answer to `extendDSRRequest`.
    public func onExtendDSRRequest(_ answer: @escaping @Sendable (Operations.ExtendDSRRequest.Input) async throws -> Operations.ExtendDSRRequest.Output) {
        plan(Operations.ExtendDSRRequest.id, answer)
    }

    /// Plans the answer to `closeDSRRequest`.
    public func onCloseDSRRequest(_ answer: @escaping @Sendable (Operations.CloseDSRRequest.Input) async throws -> Operations.CloseDSRRequest.Output) {
        plan(Operations.CloseDSRRequest.id, answer)
    }

    /// Plans the answer to `exportDSRData`.
    public func onExportDSRData(_ answer: @escaping @Sendable (Operations.ExportDSRData.Input) async throws -> Operations.ExportDSRData.Output) {
        plan(Operations.ExportDSRData.id, answer)
    }

    /// Plans the answer to `confirmDSRExport`.
    public func onConfirmDSRExport(_ answer: @escaping @Sendable (Operations.ConfirmDSRExport.Input) async throws -> Operations.ConfirmDSRExport.Output) {
        plan(Operations.ConfirmDSRExport.id, answer)
    }

    /// Plans the answer to `checkDSRErasurePlan`.
    public func onCheckDSRErasurePlan(
        _ answer: @escaping @Sendable (Operations.CheckDSRErasurePlan.Input) async throws -> Operations.CheckDSRErasurePlan.Output
    ) {
        plan(Operations.CheckDSRErasurePlan.id, answer)
    }

    /// Plans the answer to `planDSRErasure`.
    public func onPlanDSRErasure(_ answer: @escaping @Sendable (Operations.PlanDSRErasure.Input) async throws -> Operations.PlanDSRErasure.Output) {
        plan(Operations.PlanDSRErasure.id, answer)
    }

    /// Plans the answer to `applyDSRErasure`.
    public func onApplyDSRErasure(_ answer: @escaping @Sendable (Operations.ApplyDSRErasure.Input) async throws -> Operations.ApplyDSRErasure.Output) {
        plan(Operations.ApplyDSRErasure.id, answer)
    }

    /// Plans the answer to `getDSRReceipt`.
    public func onGetDSRReceipt(_ answer: @escaping @Sendable (Operations.GetDSRReceipt.Input) async throws -> Operations.GetDSRReceipt.Output) {
        plan(Operations.GetDSRReceipt.id, answer)
    }

    /// Plans the answer to `getDSRReceiptKey`.
    public func onGetDSRReceiptKey(_ answer: @escaping @Sendable (Operations.GetDSRReceiptKey.Input) async throws -> Operations.GetDSRReceiptKey.Output) {
        plan(Operations.GetDSRReceiptKey.id, answer)
    }

    /// Plans the answer to `listSubjectAuditEvents`.
    public func onListSubjectAuditEvents(
        _ answer: @escaping @Sendable (Operations.ListSubjectAuditEvents.Input) async throws -> Operations.ListSubjectAuditEvents.Output
    ) {
        plan(Operations.ListSubjectAuditEvents.id, answer)
    }

    /// Plans the answer to `listAuditEvents`.
    public func onListAuditEvents(_ answer: @escaping @Sendable (Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output) {
        plan(Operations.ListAuditEvents.id, answer)
    }
}

extension StubAPI.Client {
    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        try await stub.call(Operations.GetHealth.id, input, middlewares: middlewares)
    }

    func registerOptions(_ input: Operations.RegisterOptions.Input) async throws -> Operations.RegisterOptions.Output {
        try await stub.call(Operations.RegisterOptions.id, input, middlewares: middlewares)
    }

    func registerVerify(_ input: Operations.RegisterVerify.Input) async throws -> Operations.RegisterVerify.Output {
        try await stub.call(Operations.RegisterVerify.id, input, middlewares: middlewares)
    }

    func loginOptions(_ input: Operations.LoginOptions.Input) async throws -> Operations.LoginOptions.Output {
        try await stub.call(Operations.LoginOptions.id, input, middlewares: middlewares)
    }

    func loginVerify(_ input: Operations.LoginVerify.Input) async throws -> Operations.LoginVerify.Output {
        try await stub.call(Operations.LoginVerify.id, input, middlewares: middlewares)
    }

    func stepUpOptions(_ input: Operations.StepUpOptions.Input) async throws -> Operations.StepUpOptions.Output {
        try await stub.call(Operations.StepUpOptions.id, input, middlewares: middlewares)
    }

    func stepUpVerify(_ input: Operations.StepUpVerify.Input) async throws -> Operations.StepUpVerify.Output {
        try await stub.call(Operations.StepUpVerify.id, input, middlewares: middlewares)
    }

    func listPasskeys(_ input: Operations.ListPasskeys.Input) async throws -> Operations.ListPasskeys.Output {
        try await stub.call(Operations.ListPasskeys.id, input, middlewares: middlewares)
    }

    func removePasskey(_ input: Operations.RemovePasskey.Input) async throws -> Operations.RemovePasskey.Output {
        try await stub.call(Operations.RemovePasskey.id, input, middlewares: middlewares)
    }

    func renewSession(_ input: Operations.RenewSession.Input) async throws -> Operations.RenewSession.Output {
        try await stub.call(Operations.RenewSession.id, input, middlewares: middlewares)
    }

    func logout(_ input: Operations.Logout.Input) async throws -> Operations.Logout.Output {
        try await stub.call(Operations.Logout.id, input, middlewares: middlewares)
    }

    func getSession(_ input: Operations.GetSession.Input) async throws -> Operations.GetSession.Output {
        try await stub.call(Operations.GetSession.id, input, middlewares: middlewares)
    }

    func listSessions(_ input: Operations.ListSessions.Input) async throws -> Operations.ListSessions.Output {
        try await stub.call(Operations.ListSessions.id, input, middlewares: middlewares)
    }

    func getPortfolio(_ input: Operations.GetPortfolio.Input) async throws -> Operations.GetPortfolio.Output {
        try await stub.call(Operations.GetPortfolio.id, input, middlewares: middlewares)
    }

    func getSyncChanges(_ input: Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output {
        try await stub.call(Operations.GetSyncChanges.id, input, middlewares: middlewares)
    }

    func getSyncSummary(_ input: Operations.GetSyncSummary.Input) async throws -> Operations.GetSyncSummary.Output {
        try await stub.call(Operations.GetSyncSummary.id, input, middlewares: middlewares)
    }

    func getInstruments(_ input: Operations.GetInstruments.Input) async throws -> Operations.GetInstruments.Output {
        try await stub.call(Operations.GetInstruments.id, input, middlewares: middlewares)
    }

    func listOrders(_ input: Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output {
        try await stub.call(Operations.ListOrders.id, input, middlewares: middlewares)
    }

    func placeOrder(_ input: Operations.PlaceOrder.Input) async throws -> Operations.PlaceOrder.Output {
        try await stub.call(Operations.PlaceOrder.id, input, middlewares: middlewares)
    }

    func checkOrders(_ input: Operations.CheckOrders.Input) async throws -> Operations.CheckOrders.Output {
        try await stub.call(Operations.CheckOrders.id, input, middlewares: middlewares)
    }

    func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output {
        try await stub.call(Operations.GetOrder.id, input, middlewares: middlewares)
    }

    func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output {
        try await stub.call(Operations.CancelOrder.id, input, middlewares: middlewares)
    }

    func cancelOrdersAfter(_ input: Operations.CancelOrdersAfter.Input) async throws -> Operations.CancelOrdersAfter.Output {
        try await stub.call(Operations.CancelOrdersAfter.id, input, middlewares: middlewares)
    }

    func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output {
        try await stub.call(Operations.ListEvents.id, input, middlewares: middlewares)
    }

    func listAPNsDevices(_ input: Operations.ListAPNsDevices.Input) async throws -> Operations.ListAPNsDevices.Output {
        try await stub.call(Operations.ListAPNsDevices.id, input, middlewares: middlewares)
    }

    func registerAPNsDevice(_ input: Operations.RegisterAPNsDevice.Input) async throws -> Operations.RegisterAPNsDevice.Output {
        try await stub.call(Operations.RegisterAPNsDevice.id, input, middlewares: middlewares)
    }

    func revokeAPNsDevice(_ input: Operations.RevokeAPNsDevice.Input) async throws -> Operations.RevokeAPNsDevice.Output {
        try await stub.call(Operations.RevokeAPNsDevice.id, input, middlewares: middlewares)
    }

    func listDSRRequests(_ input: Operations.ListDSRRequests.Input) async throws -> Operations.ListDSRRequests.Output {
        try await stub.call(Operations.ListDSRRequests.id, input, middlewares: middlewares)
    }

    func createDSRRequest(_ input: Operations.CreateDSRRequest.Input) async throws -> Operations.CreateDSRRequest.Output {
        try await stub.call(Operations.CreateDSRRequest.id, input, middlewares: middlewares)
    }

    func getDSRRequest(_ input: Operations.GetDSRRequest.Input) async throws -> Operations.GetDSRRequest.Output {
        try await stub.call(Operations.GetDSRRequest.id, input, middlewares: middlewares)
    }

    func verifyDSRIdentity(_ input: Operations.VerifyDSRIdentity.Input) async throws -> Operations.VerifyDSRIdentity.Output {
        try await stub.call(Operations.VerifyDSRIdentity.id, input, middlewares: middlewares)
    }

    func extendDSRRequest(_ input: Operations.ExtendDSRRequest.Input) async throws -> Operations.ExtendDSRRequest.Output {
        try await stub.call(Operations.ExtendDSRRequest.id, input, middlewares: middlewares)
    }

    func closeDSRRequest(_ input: Operations.CloseDSRRequest.Input) async throws -> Operations.CloseDSRRequest.Output {
        try await stub.call(Operations.CloseDSRRequest.id, input, middlewares: middlewares)
    }

    func exportDSRData(_ input: Operations.ExportDSRData.Input) async throws -> Operations.ExportDSRData.Output {
        try await stub.call(Operations.ExportDSRData.id, input, middlewares: middlewares)
    }

    func confirmDSRExport(_ input: Operations.ConfirmDSRExport.Input) async throws -> Operations.ConfirmDSRExport.Output {
        try await stub.call(Operations.ConfirmDSRExport.id, input, middlewares: middlewares)
    }

    func checkDSRErasurePlan(_ input: Operations.CheckDSRErasurePlan.Input) async throws -> Operations.CheckDSRErasurePlan.Output {
        try await stub.call(Operations.CheckDSRErasurePlan.id, input, middlewares: middlewares)
    }

    func planDSRErasure(_ input: Operations.PlanDSRErasure.Input) async throws -> Operations.PlanDSRErasure.Output {
        try await stub.call(Operations.PlanDSRErasure.id, input, middlewares: middlewares)
    }

    func applyDSRErasure(_ input: Operations.ApplyDSRErasure.Input) async throws -> Operations.ApplyDSRErasure.Output {
        try await stub.call(Operations.ApplyDSRErasure.id, input, middlewares: middlewares)
    }

    func getDSRReceipt(_ input: Operations.GetDSRReceipt.Input) async throws -> Operations.GetDSRReceipt.Output {
        try await stub.call(Operations.GetDSRReceipt.id, input, middlewares: middlewares)
    }

    func getDSRReceiptKey(_ input: Operations.GetDSRReceiptKey.Input) async throws -> Operations.GetDSRReceiptKey.Output {
        try await stub.call(Operations.GetDSRReceiptKey.id, input, middlewares: middlewares)
    }

    func listSubjectAuditEvents(_ input: Operations.ListSubjectAuditEvents.Input) async throws -> Operations.ListSubjectAuditEvents.Output {
        try await stub.call(Operations.ListSubjectAuditEvents.id, input, middlewares: middlewares)
    }

    func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output {
        try await stub.call(Operations.ListAuditEvents.id, input, middlewares: middlewares)
    }
}

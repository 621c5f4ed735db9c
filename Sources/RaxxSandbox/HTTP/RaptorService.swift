import Foundation
import RaxxAPI

/// The sandbox's implementation of the generated Raptor server protocol: a thin forwarder. Each
/// operation passes `AccessGate` (who may call it is declared once, in `Access.table`), then goes
/// to the handler of its tag, which works over stores and never sees SQL.
///
/// The gate runs here rather than in a server middleware so that input the generated server
/// cannot decode still answers 400 first, as it always has.
public struct RaptorService: APIProtocol {
    public let database: SandboxDatabase
    public let configuration: SandboxConfiguration
    public let market: Market
    public let clock: @Sendable () -> Date
    /// When a request last came in (the application's middleware notes each one).
    public let activity = RequestActivity()

    let gate: AccessGate
    let meta: MetaHandlers
    let auth: AuthHandlers
    let session: SessionHandlers
    let sync: SyncHandlers
    let instruments: InstrumentHandlers
    let orders: OrderHandlers
    let events: EventHandlers
    let devices: DeviceHandlers
    let switches: DeadManSwitches
    let dsr: DSRHandlers
    let audit: AuditHandlers

    public init(
        database: SandboxDatabase, configuration: SandboxConfiguration,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(database: database, stores: database.stores, configuration: configuration, clock: clock)
    }

    init(
        database: SandboxDatabase, stores r: Stores, configuration: SandboxConfiguration,
        clock: @escaping @Sendable () -> Date
    ) {
        let market = Market(seed: configuration.marketSeed)
        self.database = database
        self.configuration = configuration
        self.market = market
        self.clock = clock
        gate = AccessGate(sessions: r.sessions, clock: clock, audit: r.audit)
        meta = MetaHandlers(health: r.health, clock: clock)
        auth = AuthHandlers(auth: r.auth, sessions: r.sessions, audit: r.audit, configuration: configuration, clock: clock)
        switches = DeadManSwitches(trading: r.trading, market: market, clock: clock)
        session = SessionHandlers(sessions: r.sessions, switches: switches, configuration: configuration, clock: clock)
        sync = SyncHandlers(trading: r.trading, market: market, configuration: configuration, clock: clock)
        instruments = InstrumentHandlers(market: market, clock: clock)
        orders = OrderHandlers(
            trading: r.trading, audit: r.audit, market: market, configuration: configuration, clock: clock,
            faults: FaultInjector(loseOrderReplies: configuration.loseOrderReplies))
        events = EventHandlers(events: r.events, notifier: database.notifier, clock: clock)
        devices = DeviceHandlers(devices: r.devices, clock: clock)
        dsr = DSRHandlers(dsr: r.dsr, trail: r.trail, audit: r.audit, configuration: configuration, clock: clock, activity: activity)
        audit = AuditHandlers(trail: r.trail)
    }

    // MARK: meta

    public func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        try await gate.open(Operations.GetHealth.id) { try await meta.getHealth(input) }
    }

    // MARK: auth

    public func registerOptions(_ input: Operations.RegisterOptions.Input) async throws -> Operations.RegisterOptions.Output {
        try await auth.registerOptions(input, caller: { try await gate.check(Operations.RegisterOptions.id) })
    }

    public func registerVerify(_ input: Operations.RegisterVerify.Input) async throws -> Operations.RegisterVerify.Output {
        try await gate.open(Operations.RegisterVerify.id) { try await auth.registerVerify(input) }
    }

    public func loginOptions(_ input: Operations.LoginOptions.Input) async throws -> Operations.LoginOptions.Output {
        try await gate.open(Operations.LoginOptions.id) { try await auth.loginOptions(input) }
    }

    public func loginVerify(_ input: Operations.LoginVerify.Input) async throws -> Operations.LoginVerify.Output {
        try await gate.open(Operations.LoginVerify.id) { try await auth.loginVerify(input) }
    }

    public func stepUpOptions(_ input: Operations.StepUpOptions.Input) async throws -> Operations.StepUpOptions.Output {
        try await auth.stepUpOptions(input, caller: gate.caller(Operations.StepUpOptions.id))
    }

    public func stepUpVerify(_ input: Operations.StepUpVerify.Input) async throws -> Operations.StepUpVerify.Output {
        try await auth.stepUpVerify(input, caller: gate.caller(Operations.StepUpVerify.id))
    }

    public func listPasskeys(_ input: Operations.ListPasskeys.Input) async throws -> Operations.ListPasskeys.Output {
        try await auth.listPasskeys(input, caller: gate.caller(Operations.ListPasskeys.id))
    }

    public func removePasskey(_ input: Operations.RemovePasskey.Input) async throws -> Operations.RemovePasskey.Output {
        try await auth.removePasskey(input, caller: gate.caller(Operations.RemovePasskey.id))
    }

    // MARK: session

    public func renewSession(_ input: Operations.RenewSession.Input) async throws -> Operations.RenewSession.Output {
        try await gate.open(Operations.RenewSession.id) { try await session.renewSession(input) }
    }

    public func logout(_ input: Operations.Logout.Input) async throws -> Operations.Logout.Output {
        try await session.logout(input, caller: gate.caller(Operations.Logout.id))
    }

    public func getSession(_ input: Operations.GetSession.Input) async throws -> Operations.GetSession.Output {
        try await session.getSession(input, caller: gate.caller(Operations.GetSession.id))
    }

    // MARK: sync (read)

    public func getPortfolio(_ input: Operations.GetPortfolio.Input) async throws -> Operations.GetPortfolio.Output {
        try await sync.getPortfolio(input, caller: gate.caller(Operations.GetPortfolio.id))
    }

    public func getSyncChanges(_ input: Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output {
        try await sync.getSyncChanges(input, caller: gate.caller(Operations.GetSyncChanges.id))
    }

    public func getSyncSummary(_ input: Operations.GetSyncSummary.Input) async throws -> Operations.GetSyncSummary.Output {
        try await sync.getSyncSummary(input, caller: gate.caller(Operations.GetSyncSummary.id))
    }

    // MARK: instruments

    public func getInstruments(_ input: Operations.GetInstruments.Input) async throws -> Operations.GetInstruments.Output {
        try await instruments.getInstruments(input, caller: gate.caller(Operations.GetInstruments.id))
    }

    // MARK: orders

    public func placeOrder(_ input: Operations.PlaceOrder.Input) async throws -> Operations.PlaceOrder.Output {
        try await orders.placeOrder(input, caller: gate.caller(Operations.PlaceOrder.id))
    }

    public func checkOrders(_ input: Operations.CheckOrders.Input) async throws -> Operations.CheckOrders.Output {
        try await orders.checkOrders(input, caller: gate.caller(Operations.CheckOrders.id))
    }

    public func cancelOrdersAfter(_ input: Operations.CancelOrdersAfter.Input) async throws -> Operations.CancelOrdersAfter.Output {
        try await orders.cancelOrdersAfter(input, caller: gate.caller(Operations.CancelOrdersAfter.id))
    }

    public func listOrders(_ input: Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output {
        try await orders.listOrders(input, caller: gate.caller(Operations.ListOrders.id))
    }

    public func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output {
        try await orders.getOrder(input, caller: gate.caller(Operations.GetOrder.id))
    }

    public func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output {
        try await orders.cancelOrder(input, caller: gate.caller(Operations.CancelOrder.id))
    }

    // MARK: events

    public func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output {
        try await events.listEvents(input, caller: gate.caller(Operations.ListEvents.id))
    }

    // MARK: devices

    public func registerAPNsDevice(_ input: Operations.RegisterAPNsDevice.Input) async throws -> Operations.RegisterAPNsDevice.Output {
        try await devices.registerAPNsDevice(input, caller: gate.caller(Operations.RegisterAPNsDevice.id))
    }

    public func listAPNsDevices(_ input: Operations.ListAPNsDevices.Input) async throws -> Operations.ListAPNsDevices.Output {
        try await devices.listAPNsDevices(input, caller: gate.caller(Operations.ListAPNsDevices.id))
    }

    public func revokeAPNsDevice(_ input: Operations.RevokeAPNsDevice.Input) async throws -> Operations.RevokeAPNsDevice.Output {
        try await devices.revokeAPNsDevice(input, caller: gate.caller(Operations.RevokeAPNsDevice.id))
    }

    // MARK: dsr (staff only: Access.table)

    public func createDSRRequest(_ input: Operations.CreateDSRRequest.Input) async throws -> Operations.CreateDSRRequest.Output {
        try await dsr.createDSRRequest(input, caller: gate.caller(Operations.CreateDSRRequest.id))
    }

    public func listDSRRequests(_ input: Operations.ListDSRRequests.Input) async throws -> Operations.ListDSRRequests.Output {
        try await dsr.listDSRRequests(input, caller: gate.caller(Operations.ListDSRRequests.id))
    }

    public func getDSRRequest(_ input: Operations.GetDSRRequest.Input) async throws -> Operations.GetDSRRequest.Output {
        try await dsr.getDSRRequest(input, caller: gate.caller(Operations.GetDSRRequest.id))
    }

    public func verifyDSRIdentity(_ input: Operations.VerifyDSRIdentity.Input) async throws -> Operations.VerifyDSRIdentity.Output {
        try await dsr.verifyDSRIdentity(input, caller: gate.caller(Operations.VerifyDSRIdentity.id))
    }

    public func extendDSRRequest(_ input: Operations.ExtendDSRRequest.Input) async throws -> Operations.ExtendDSRRequest.Output {
        try await dsr.extendDSRRequest(input, caller: gate.caller(Operations.ExtendDSRRequest.id))
    }

    public func closeDSRRequest(_ input: Operations.CloseDSRRequest.Input) async throws -> Operations.CloseDSRRequest.Output {
        try await dsr.closeDSRRequest(input, caller: gate.caller(Operations.CloseDSRRequest.id))
    }

    public func exportDSRData(_ input: Operations.ExportDSRData.Input) async throws -> Operations.ExportDSRData.Output {
        try await dsr.exportDSRData(input, caller: gate.caller(Operations.ExportDSRData.id))
    }

    public func confirmDSRExport(_ input: Operations.ConfirmDSRExport.Input) async throws -> Operations.ConfirmDSRExport.Output {
        try await dsr.confirmDSRExport(input, caller: gate.caller(Operations.ConfirmDSRExport.id))
    }

    public func checkDSRErasurePlan(_ input: Operations.CheckDSRErasurePlan.Input) async throws -> Operations.CheckDSRErasurePlan.Output {
        try await dsr.checkDSRErasurePlan(input, caller: gate.caller(Operations.CheckDSRErasurePlan.id))
    }

    public func planDSRErasure(_ input: Operations.PlanDSRErasure.Input) async throws -> Operations.PlanDSRErasure.Output {
        try await dsr.planDSRErasure(input, caller: gate.caller(Operations.PlanDSRErasure.id))
    }

    public func applyDSRErasure(_ input: Operations.ApplyDSRErasure.Input) async throws -> Operations.ApplyDSRErasure.Output {
        try await dsr.applyDSRErasure(input, caller: gate.caller(Operations.ApplyDSRErasure.id))
    }

    public func getDSRReceipt(_ input: Operations.GetDSRReceipt.Input) async throws -> Operations.GetDSRReceipt.Output {
        try await dsr.getDSRReceipt(input, caller: gate.caller(Operations.GetDSRReceipt.id))
    }

    public func listSubjectAuditEvents(_ input: Operations.ListSubjectAuditEvents.Input) async throws -> Operations.ListSubjectAuditEvents.Output {
        try await dsr.listSubjectAuditEvents(input, caller: gate.caller(Operations.ListSubjectAuditEvents.id))
    }

    public func getDSRReceiptKey(_ input: Operations.GetDSRReceiptKey.Input) async throws -> Operations.GetDSRReceiptKey.Output {
        try await gate.open(Operations.GetDSRReceiptKey.id) { try await dsr.getDSRReceiptKey(input) }
    }

    // MARK: audit

    public func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output {
        try await audit.listAuditEvents(input, caller: gate.caller(Operations.ListAuditEvents.id))
    }
}

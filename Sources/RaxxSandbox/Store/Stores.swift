/// What the sandbox keeps, one store per concern, in the style of GRDB's AppDatabase: concrete
/// types over the database writer, each method one transaction. Handlers see these and never SQL,
/// rows or a database; `SandboxDatabase.stores` hands them out. The rules (what an order may do,
/// when a step-up is needed, what a plan's hash covers) are the domain's (Domain/); a store
/// reads and writes.
struct Stores: Sendable {
    var health: HealthStore
    var auth: AuthStore
    var sessions: SessionStore
    var audit: AuditStore
    var trading: TradingStore
    var events: EventStore
    var devices: DeviceStore
    var dsr: DSRStore
    var trail: AuditTrailStore
    var pushDispatch: PushDispatchStore
}

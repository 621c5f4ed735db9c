import Foundation
import RaxxAPI

/// The sandbox's implementation of the generated Raptor server protocol: a thin forwarder. Each
/// operation passes `AccessGate` (who may call it is declared once, in `Access.table`), then goes
/// to the handler of its tag, named as the tag is (`Scripts/gen-operations` writes the forwarders
/// from the spec: RaptorService+Operations.swift), which works over stores and never sees SQL.
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
    let read: SyncHandlers
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
        read = SyncHandlers(trading: r.trading, market: market, configuration: configuration, clock: clock)
        instruments = InstrumentHandlers(market: market, clock: clock)
        orders = OrderHandlers(
            trading: r.trading, audit: r.audit, market: market, configuration: configuration, clock: clock,
            faults: FaultInjector(loseOrderReplies: configuration.loseOrderReplies))
        events = EventHandlers(events: r.events, notifier: database.notifier, clock: clock)
        devices = DeviceHandlers(devices: r.devices, clock: clock)
        dsr = DSRHandlers(dsr: r.dsr, trail: r.trail, audit: r.audit, configuration: configuration, clock: clock, activity: activity)
        audit = AuditHandlers(trail: r.trail)
    }
}

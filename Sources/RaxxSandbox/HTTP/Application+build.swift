import Foundation
import Hummingbird
import Logging
import OpenAPIHummingbird
import OpenAPIRuntime
import RaxxAPI
import RaxxAPIServer
import RaxxWire
import ServiceLifecycle

/// Builds the sandbox application: the generated Raptor routes over `RaptorService`, with
/// problem+json for every failure, and the session-expiry and dead man's switch scans as background
/// services; with a `pushSender`, the push dispatcher too (each new event to its account's
/// opted-in devices).
/// `onListening` hears the bound port (useful with port 0).
public func buildApplication(
    configuration: SandboxConfiguration,
    database: SandboxDatabase,
    clock: @escaping @Sendable () -> Date = { Date() },
    logger: Logger = Logger(label: "raxx-sandbox"),
    pushSender: (any EventPushSending)? = nil,
    onListening: @escaping @Sendable (Int) async -> Void = { _ in }
) throws -> some ApplicationProtocol {
    let router = Router(context: SandboxRequestContext.self)
    let service = RaptorService(database: database, configuration: configuration, clock: clock)
    router.middlewares.add(ActivityMiddleware(activity: service.activity))
    router.middlewares.add(ClientAddressMiddleware())
    router.middlewares.add(ProblemMiddleware(probe: try QueryParameterProbe()))
    router.middlewares.add(BodyLimitMiddleware())
    try service.registerHandlers(on: router, configuration: .raxx, middlewares: [BearerTokenMiddleware(), SpecBoundsMiddleware(), PreEncodedBodyMiddleware()])
    let events = service.events, switches = service.switches
    let expiryScan = PeriodicScan(
        name: "session expiry scan", interval: .milliseconds(max(configuration.sessionScanInterval.milliseconds, 1)),
        logger: logger
    ) { try await events.noteExpiringSessions() }
    let switchScan = PeriodicScan(
        name: "dead man's switch scan",
        interval: .milliseconds(max(configuration.cancelAfterScanInterval.milliseconds, 1)),
        logger: logger
    ) { try await switches.fireDue() }
    var services: [any Service] = [expiryScan, switchScan]
    if let pushSender {
        services.append(
            PushDispatcher(
                store: database.stores.pushDispatch, notifier: database.notifier, sender: pushSender,
                clock: clock, logger: logger))
    }
    return Application(
        router: router,
        // Requests the HTTP parser rejects are answered as problem+json too.
        server: .http1(configuration: .init(additionalChannelHandlers: [ParseErrorProblemHandler()])),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "raxx-sandbox"),
        services: services,
        onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
        logger: logger
    )
}

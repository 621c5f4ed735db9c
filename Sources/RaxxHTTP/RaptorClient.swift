import Foundation
import OpenAPIRuntime
import RaxxAPI
import RaxxCore

/// Builds the generated Raptor client on the libcurl transport for one tool.
public enum RaptorClient {
    public static func make(tool: String, configuration: RaxxConfiguration,
                            observer: @escaping ConnectivityMiddleware.Observer = { _ in },
                            serverClock: ServerClock? = nil,
                            middlewares: [any ClientMiddleware] = []) -> Client {
        let raw = makeRaw(tool: tool, configuration: configuration, observer: observer, serverClock: serverClock, middlewares: middlewares)
        return Client(serverURL: raw.serverURL, configuration: .raxxClient, transport: raw.transport, middlewares: raw.middlewares)
    }

    /// The same transport and middlewares, for answers read as bytes (`RawRaptor`).
    public static func makeRaw(tool: String, configuration: RaxxConfiguration,
                               observer: @escaping ConnectivityMiddleware.Observer = { _ in },
                               serverClock: ServerClock? = nil,
                               middlewares: [any ClientMiddleware] = []) -> RawRaptor {
        let transport = CurlTransport(options: .init(
            connectTimeout: configuration.connectTimeout,
            totalTimeout: configuration.totalTimeout,
            userAgent: CurlTransport.userAgent(tool: tool)
        ))
        return RawRaptor(
            serverURL: configuration.endpoint.url,
            transport: transport,
            middlewares: [ConnectivityMiddleware(observer: observer)] + (serverClock.map { [ServerClockMiddleware(clock: $0)] } ?? [])
                + middlewares
        )
    }
}

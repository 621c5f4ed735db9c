import Foundation
import OpenAPIRuntime
import RaxxAPI
import RaxxCore
import RaxxWire

/// Builds the generated Raptor client on the libcurl transport for one tool.
public enum RaptorClient {
    /// `transport`: one the client shares with others (their connections kept alive for each
    /// other); by default one of its own.
    public static func make(
        tool: String, configuration: RaxxConfiguration,
        observer: @escaping ConnectivityMiddleware.Observer = { _ in },
        serverClock: ServerClock? = nil,
        middlewares: [any ClientMiddleware] = [], transport: CurlTransport? = nil
    ) -> Client {
        let raw = makeRaw(
            tool: tool, configuration: configuration, observer: observer, serverClock: serverClock, middlewares: middlewares,
            transport: transport)
        return Client(serverURL: raw.serverURL, configuration: .raxxClient, transport: raw.transport, middlewares: raw.middlewares)
    }

    /// The same transport and middlewares, for answers read as bytes (`RawRaptor`).
    public static func makeRaw(
        tool: String, configuration: RaxxConfiguration,
        observer: @escaping ConnectivityMiddleware.Observer = { _ in },
        serverClock: ServerClock? = nil,
        middlewares: [any ClientMiddleware] = [], transport: CurlTransport? = nil
    ) -> RawRaptor {
        RawRaptor(
            serverURL: configuration.endpoint.url,
            transport: transport ?? Self.transport(tool: tool, configuration: configuration),
            middlewares: [ConnectivityMiddleware(observer: observer)] + (serverClock.map { [ServerClockMiddleware(clock: $0)] } ?? [])
                + middlewares
        )
    }

    /// A libcurl transport with the configuration's timeouts.
    public static func transport(tool: String, configuration: RaxxConfiguration) -> CurlTransport {
        CurlTransport(
            options: .init(
                connectTimeout: configuration.connectTimeout,
                totalTimeout: configuration.totalTimeout,
                userAgent: CurlTransport.userAgent(tool: tool),
                trace: configuration.debugAPI ? .standardError : nil
            ))
    }
}

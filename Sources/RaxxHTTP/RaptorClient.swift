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
        let transport = CurlTransport(options: .init(
            connectTimeout: configuration.connectTimeout,
            totalTimeout: configuration.totalTimeout,
            userAgent: CurlTransport.userAgent(tool: tool)
        ))
        return Client(
            serverURL: configuration.endpoint.url,
            configuration: .raxx,
            transport: transport,
            middlewares: [ConnectivityMiddleware(observer: observer)] + (serverClock.map { [ServerClockMiddleware(clock: $0)] } ?? [])
                + middlewares
        )
    }
}

import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxCore

/// Reads every exchange as connectivity: an answer is `online`, except 502/503/504/429 from an
/// unhealthy server, which are soft offline and thrown as `UnhealthyServer`; a transport failure
/// is what it was classified as. The observer hears each reading (to record it for `status`).
public struct ConnectivityMiddleware: ClientMiddleware {
    public typealias Observer = @Sendable (Connectivity) -> Void
    let observe: Observer

    public init(observer: @escaping Observer = { _ in }) { self.observe = observer }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let answer: (HTTPResponse, HTTPBody?)
        do {
            answer = try await next(request, body, baseURL)
        } catch {
            // The runtime wraps what the transport threw in a ClientError.
            let underlying = (error as? ClientError)?.underlyingError ?? error
            if let failure = underlying as? TransportFailure, failure.connectivity != .unknown {
                observe(failure.connectivity)
            }
            throw error
        }
        let status = answer.0.status.code
        let state = Connectivity.classify(httpStatus: status)
        observe(state)
        if state == .offlineSoft {
            let retryAfter = answer.0.headerFields[.retryAfter].flatMap { Int($0) }
            throw UnhealthyServer(status: status, retryAfter: retryAfter)
        }
        return answer
    }
}

/// The server answered, but as an unhealthy one does (502, 503, 504 or 429).
public struct UnhealthyServer: Error, Sendable, Equatable {
    public var status: Int
    public var retryAfter: Int?
}

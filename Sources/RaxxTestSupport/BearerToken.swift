import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends a fixed bearer token (a test's stand-in for the session's middleware).
public struct BearerToken: ClientMiddleware {
    let token: String
    public init(_ token: String) { self.token = token }
    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        return try await next(request, body, baseURL)
    }
}

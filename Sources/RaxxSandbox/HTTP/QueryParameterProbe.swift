import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxAPIServer
import RaxxWire
import Synchronization

/// Names the query parameter a request could not be decoded for.
///
/// The generated server decodes each query parameter with its own URI decoder, rooted at the
/// parameter; a bad value (`limit=abc`) comes back as a bare `DecodingError` whose coding path is
/// empty, so the parameter's name is lost on the way. The probe decodes the request's query
/// again, one parameter at a time, through the very same generated code (registered over
/// `DecodeOnlyAPI`, whose operations stop as soon as their input is decoded), and answers the
/// first parameter that fails on its own. It runs only on the error path.
struct QueryParameterProbe: Sendable {
    typealias Handler = @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)

    private let handlers: [(method: HTTPRequest.Method, handler: Handler)]

    init() throws {
        let recorder = Recorder()
        try DecodeOnlyAPI().registerHandlers(on: recorder, configuration: .raxx, middlewares: [OperationFilter()])
        handlers = recorder.handlers.withLock { $0 }
    }

    /// The query parameter of `error`'s request that alone fails to decode, if there is one.
    func failingParameter(_ error: ServerError) async -> String? {
        guard error.operationInput == nil, error.underlyingError is DecodingError,
            let path = error.request.path, let mark = path.firstIndex(of: "?")
        else { return nil }
        let route = path[..<mark]
        // The query's items, grouped by name in order of appearance (an exploded array repeats one).
        var names: [String] = []
        var items: [String: [Substring]] = [:]
        for item in path[path.index(after: mark)...].split(separator: "&") where !item.isEmpty {
            let rawName = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? item
            let name = String(rawName).removingPercentEncoding ?? String(rawName)
            if items[name] == nil { names.append(name) }
            items[name, default: []].append(item)
        }
        for name in names {
            var request = error.request
            request.path = String(route) + "?" + (items[name] ?? []).joined(separator: "&")
            if await decodingFails(request, operationID: error.operationID, metadata: error.requestMetadata) { return name }
        }
        return nil
    }

    /// Whether the generated server fails to decode `request` for `operationID` with a
    /// `DecodingError` (a missing body or parameter is not that, and passes).
    private func decodingFails(_ request: HTTPRequest, operationID: String, metadata: ServerRequestMetadata) async -> Bool {
        for (method, handler) in handlers where method == request.method {
            do {
                _ = try await OperationFilter.$wanted.withValue(operationID) { try await handler(request, nil, metadata) }
                return false
            } catch let e as ServerError {
                if e.underlyingError is OperationFilter.OtherOperation { continue }
                return e.operationInput == nil && e.underlyingError is DecodingError
            } catch {
                return false
            }
        }
        return false
    }

    /// Keeps the handlers the generated code registers.
    private final class Recorder: ServerTransport, Sendable {
        let handlers = Mutex<[(method: HTTPRequest.Method, handler: Handler)]>([])

        func register(_ handler: @escaping Handler, method: HTTPRequest.Method, path: String) throws {
            handlers.withLock { $0.append((method, handler)) }
        }
    }

    /// Lets only the operation being probed through: every other one stops before decoding.
    private struct OperationFilter: ServerMiddleware {
        @TaskLocal static var wanted: String?

        struct OtherOperation: Error {}

        func intercept(
            _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
        )
            async throws -> (HTTPResponse, HTTPBody?)
        {
            guard operationID == Self.wanted else { throw OtherOperation() }
            return try await next(request, body, metadata)
        }
    }
}

/// Every operation, stopping as soon as its input is decoded: the probe's stand-in for
/// `RaptorService`, so that probing never runs a handler (its operations:
/// DecodeOnlyAPI+Operations.swift, which `Scripts/gen-operations` writes from the spec).
struct DecodeOnlyAPI: APIProtocol {
    struct Decoded: Error {}
}

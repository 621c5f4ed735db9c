import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxCore
import RaxxWire

/// Requests to Raptor whose bodies go and come back as bytes instead of generated values: for the
/// answers too large to decode value by value (the sync pages, which the store reads straight into
/// its tables), and the orders of a batch (each encoded once, for the journal and the wire). The
/// same transport and middlewares as the generated client (connectivity, the server's clock, the
/// session's token) and the same Accept header; unlike it, an answer's Content-Type is not looked
/// at (its bytes are read as JSON or refused). An answer is read up to its operation's ceiling
/// (`AnswerCeiling`), whatever the transport.
public struct RawRaptor: Sendable {
    public let serverURL: URL
    let transport: any ClientTransport
    let middlewares: [any ClientMiddleware]

    public init(serverURL: URL, transport: any ClientTransport, middlewares: [any ClientMiddleware]) {
        self.serverURL = serverURL
        self.transport = transport
        self.middlewares = middlewares
    }

    /// The same middlewares in front, and `more` after them (the session's bearer token).
    public func adding(_ more: [any ClientMiddleware]) -> RawRaptor {
        RawRaptor(serverURL: serverURL, transport: transport, middlewares: middlewares + more)
    }

    /// GETs `operation` with its query's `values` (one for each of its names, in the spec's form:
    /// as the generated client writes them); answers the body. A problem answer (any status but
    /// 200) is thrown as the error a person sees, as `checked()` throws it.
    public func get(_ operation: WireOperation, _ values: [String]) async throws -> [UInt8] {
        precondition(values.count == operation.query.count, "one value for each of \(operation.id)'s query names")
        let path = operation.path, operationID = operation.id
        var components = URLComponents()
        components.queryItems = zip(operation.query, values).map { URLQueryItem(name: $0, value: $1) }
        let target = path + (values.isEmpty ? "" : "?" + (components.percentEncodedQuery ?? ""))
        var fields = HTTPFields()
        fields[.accept] = Self.accept
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: target, headerFields: fields)
        let (status, bytes) = try await exchange(request, body: nil, operationID: operationID)
        guard status == .ok else { throw Self.problem(bytes, status: status, operationID: operationID) }
        return bytes
    }

    /// POSTs `body` (JSON, already encoded) to `operation` with `headers` added; answers the status
    /// and the body, whatever the status: the caller reads its own answers.
    public func post(_ operation: WireOperation, json body: [UInt8], headers: HTTPFields = [:]) async throws -> (HTTPResponse.Status, [UInt8]) {
        let path = operation.path, operationID = operation.id
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.accept] = Self.accept
        let request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: path, headerFields: fields)
        return try await exchange(request, body: HTTPBody(body), operationID: operationID)
    }

    /// What the generated client accepts for an operation that answers JSON or a problem.
    static let accept = "application/json, application/problem+json"

    /// A problem answer's bytes as the error a person sees, as `checked()` makes it.
    public static func problem(_ bytes: [UInt8], status: HTTPResponse.Status, operationID: String) -> RaxxError {
        do {
            return ErrorMapping.raxxError(problem: try JSONDecoder().decode(Components.Schemas.Problem.self, from: Data(bytes)))
        } catch {
            return RaxxError(code: .badResponse, message: "The server answered \(status.code) without saying why (\(operationID)).")
        }
    }

    /// Sends the request through the middlewares and the transport; collects the answer's body.
    private func exchange(_ request: HTTPRequest, body: HTTPBody?, operationID: String) async throws -> (HTTPResponse.Status, [UInt8]) {
        let transport = self.transport
        var next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) = { request, body, url in
            try await transport.send(request, body: body, baseURL: url, operationID: operationID)
        }
        for middleware in middlewares.reversed() {
            let inner = next
            next = { request, body, url in
                try await middleware.intercept(request, body: body, baseURL: url, operationID: operationID, next: inner)
            }
        }
        let (response, answer) = try await next(request, body, serverURL)
        // The chunks appended whole (OpenAPIRuntime's collecting copies element by element). The
        // first is taken as it is: the transport's answer is one chunk, the whole of its buffer,
        // which becomes this array without a copy (a page of a sync is megabytes).
        let maxBytes = AnswerCeiling.bytes(for: operationID)
        var bytes: [UInt8] = []
        if let answer {
            for try await chunk in answer {
                guard bytes.count + chunk.count <= maxBytes else { throw RaxxError.answerTooLarge }
                if bytes.isEmpty {
                    bytes = Array(chunk)
                    if case .known(let length) = answer.length, length <= maxBytes, length > bytes.count { bytes.reserveCapacity(Int(length)) }
                } else {
                    bytes.append(contentsOf: chunk)
                }
            }
        }
        return (response.status, bytes)
    }
}

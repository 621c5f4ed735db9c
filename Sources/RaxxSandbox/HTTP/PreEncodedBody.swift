import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import Synchronization

/// A 200 answer's JSON written by the handler itself, for the one operation where encoding the
/// generated types per row is the cost that matters (`getSyncChanges`: thousands of changes a
/// page). The middleware offers a box for the request (a task-local value, because the generated
/// server hands handlers only the operation's input); a handler that fills it still returns its
/// typed output (an empty stand-in), and the middleware sends the box's bytes in its place. Input
/// decoding, the access gate, problems and headers all stay the generated server's.
final class PreEncodedBody: Sendable {
    @TaskLocal static var current: PreEncodedBody?

    private let bytes = Mutex<[UInt8]?>(nil)

    func fill(_ json: [UInt8]) { bytes.withLock { $0 = json } }
    func take() -> [UInt8]? { bytes.withLock { $0.take() } }
}

struct PreEncodedBodyMiddleware: ServerMiddleware {
    /// The operations whose handlers write their own 200 body.
    static let operations: Set<String> = [Operations.GetSyncChanges.id]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    )
        async throws -> (HTTPResponse, HTTPBody?)
    {
        guard Self.operations.contains(operationID) else { return try await next(request, body, metadata) }
        let box = PreEncodedBody()
        let (response, typed) = try await PreEncodedBody.$current.withValue(box) { try await next(request, body, metadata) }
        guard response.status == .ok, let json = box.take() else { return (response, typed) }
        var answer = response
        answer.headerFields[.contentLength] = nil
        return (answer, HTTPBody(json))
    }
}

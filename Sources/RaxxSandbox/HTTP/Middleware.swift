import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import OpenAPIRuntime
import RaxxAPI

/// Turns every failure into `application/problem+json`: a handler's `ProblemError` as it is, input
/// the generated server could not decode as 400 naming the parameter or field, errors Hummingbird
/// reports with a status (404, 413, …) under that status, anything else as 500.
///
/// A 5xx is logged by operation, status and problem code only: never the error's reflection,
/// which carries the request's headers and decoded input (bearer tokens, step-up grants, renewal
/// tokens, assertions).
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Names the query parameter a decoding error is about; nil leaves it unnamed.
    var probe: QueryParameterProbe? = nil

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            // A body the HTTP parser could not read (broken chunked framing): the connection is
            // unusable; Hummingbird answers 400 and closes it, as problem+json (ParseErrorProblemHandler).
            if let parse = Self.parserError(in: error) { throw parse }
            var problem = Self.problem(for: error)
            if problem.code == .badRequest, let e = error as? ServerError, let name = await probe?.failingParameter(e) {
                problem = .badRequest("Invalid value for query parameter '\(name)'.")
            }
            if problem.status >= 500 {
                let operation = (error as? ServerError)?.operationID ?? context.endpointPath ?? "no route"
                context.logger.error(
                    "\(request.method) \(operation) answered \(problem.status) \(problem.code)",
                    metadata: [
                        "operation": "\(operation)", "status": "\(problem.status)", "code": "\(problem.code)",
                        "error_type": "\(Self.errorType(error))",
                    ])
            }
            return Self.response(problem)
        }
    }

    /// The HTTP parser's error behind `error`, if that is what it is.
    static func parserError(in error: any Error) -> HTTPParserError? {
        switch error {
        case let e as HTTPParserError: e
        case let e as ServerError: parserError(in: e.underlyingError)
        default: nil
        }
    }

    /// The name of the innermost error's type, and nothing of its contents.
    static func errorType(_ error: any Error) -> String {
        if let e = error as? ServerError { return String(reflecting: type(of: e.underlyingError)) }
        return String(reflecting: type(of: error))
    }

    static func problem(for error: any Error) -> ProblemError {
        switch error {
        case let p as ProblemError:
            return p
        case let e as ServerError:
            if let p = e.underlyingError as? ProblemError { return p }
            // No operation input means the request itself could not be decoded: the client's fault.
            if e.operationInput == nil {
                if let h = e.underlyingError as? any HTTPResponseError, h.status.code == 413 { return .payloadTooLarge }
                return .badRequest(Self.decodingDetail(e.underlyingError, method: e.request.method) ?? Self.inputDetail(e.causeDescription))
            }
            // The answer cannot be written in a media type the request's Accept allows.
            if e.httpStatus.code == 406 {
                return ProblemError(
                    406, code: .notAcceptable, title: "No acceptable media type for the answer.",
                    detail: "Accept application/json (problems come as application/problem+json).")
            }
            return .internalError
        case let e as HTTPError:
            return Self.problem(status: e.status.code, detail: e.body)
        case let e as any HTTPResponseError:
            return Self.problem(status: e.status.code, detail: nil)
        default:
            return .internalError
        }
    }

    static func problem(status: Int, detail: String?) -> ProblemError {
        switch status {
        case 404: return ProblemError(404, code: .notFound, title: "No such endpoint.")
        case 405: return ProblemError(405, code: .methodNotAllowed, title: "Method not allowed.")
        case 413: return .payloadTooLarge
        case 400..<500: return ProblemError(status, code: .badRequest, title: "The request is not valid.", detail: detail)
        default: return .internalError
        }
    }

    /// A short account of why the input could not be decoded, naming the field.
    private static func decodingDetail(_ error: any Error, method: HTTPRequest.Method) -> String? {
        guard let d = error as? DecodingError else { return nil }
        // An empty coding path: the whole body, or (for a request without one) a query parameter
        // the probe could not single out.
        let whole = [.get, .head, .delete].contains(method) ? "A query parameter has an invalid value." : "The body does not have the expected shape."
        switch d {
        case .keyNotFound(let key, let c): return "Missing field '\(path(c.codingPath + [key]))'."
        case .typeMismatch(_, let c), .valueNotFound(_, let c):
            return c.codingPath.isEmpty ? whole : "Wrong type for field '\(path(c.codingPath))'."
        case .dataCorrupted(let c):
            if c.codingPath.isEmpty { return [.get, .head, .delete].contains(method) ? whole : "The body is not valid JSON." }
            return "Invalid value for field '\(path(c.codingPath))'."
        @unknown default: return nil
        }
    }

    /// The runtime's own account of input it refused (a missing parameter, body or content type:
    /// it names what is missing), without the request it quotes.
    private static func inputDetail(_ cause: String) -> String {
        for (prefix, kind) in [
            ("Missing required query parameter named: ", "query parameter"),
            ("Missing required path parameter named: ", "path parameter"),
        ] where cause.hasPrefix(prefix) {
            return "Missing \(kind) '\(cause.dropFirst(prefix.count).prefix(100))'."
        }
        return String(cause.prefix(200))
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    static func response(_ problem: ProblemError) -> Response {
        let data = (try? JSONEncoder.sorted.encode(problem.body)) ?? Data(#"{"code":"internal","status":500,"title":"error"}"#.utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        if let retry = problem.retryAfter { headers[.retryAfter] = String(retry) }
        return Response(status: .init(code: problem.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Bounds request bodies: one above `maxBytes` is refused with 413 `payload_too_large`, by its
/// Content-Length before anything is read, or as soon as a streamed body passes the bound. The
/// body is collected here, so the handlers downstream read it from memory.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    var maxBytes: Int = ProblemError.maxBodyBytes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let declared = request.headers[.contentLength], let length = Int(declared), length > maxBytes {
            throw ProblemError.payloadTooLarge
        }
        var request = request
        do {
            _ = try await request.collectBody(upTo: maxBytes)
        } catch let e as any HTTPResponseError where e.status.code == 413 {
            throw ProblemError.payloadTooLarge
        }
        return try await next(request, context)
    }
}

/// Who is asking: the bearer token of the request, if any, for `AccessGate` (a task-local value,
/// because the generated server hands `RaptorService` only the operation's input).
enum RequestIdentity {
    @TaskLocal static var bearerToken: String?
}

struct BearerTokenMiddleware: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    )
        async throws -> (HTTPResponse, HTTPBody?)
    {
        var token: String? = nil
        if let value = request.headerFields[.authorization], value.lowercased().hasPrefix("bearer ") {
            let t = value.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            if !t.isEmpty { token = t }
        }
        return try await RequestIdentity.$bearerToken.withValue(token) {
            try await next(request, body, metadata)
        }
    }
}

/// The sandbox's request context: Hummingbird's basic one, with the address the request came from.
struct SandboxRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// Which client is asking, for the budgets counted per client (`ClientBudget`): the address the
/// request came from (a task-local value, as `RequestIdentity.bearerToken` is).
enum RequestClient {
    @TaskLocal static var address: String?
}

struct ClientAddressMiddleware: RouterMiddleware {
    func handle(
        _ request: Request, context: SandboxRequestContext,
        next: (Request, SandboxRequestContext) async throws -> Response
    ) async throws -> Response {
        try await RequestClient.$address.withValue(context.remoteAddress?.ipAddress) {
            try await next(request, context)
        }
    }
}

import HTTPTypes
import RaxxAPI

/// An error a handler throws to answer with `application/problem+json`.
public struct ProblemError: Error, Sendable, Equatable {
    public var status: Int
    /// One of the spec's codes: a code the spec does not list cannot be answered.
    public var code: Components.Schemas.ProblemCode
    public var title: String
    public var detail: String?
    public var actionHash: String?
    public var retryAfter: Int?

    public init(_ status: Int, code: Components.Schemas.ProblemCode, title: String, detail: String? = nil) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
    }

    public var body: Components.Schemas.Problem {
        Components.Schemas.Problem(
            _type: "https://api.raxx.app/problems/\(code.rawValue)", title: title, status: status,
            detail: detail, code: code.rawValue, actionHash: actionHash, retryAfter: retryAfter)
    }

    public static func badRequest(_ detail: String) -> ProblemError {
        ProblemError(400, code: .badRequest, title: "The request is not valid.", detail: detail)
    }

    public static let unauthorized = ProblemError(401, code: .unauthorized, title: "Sign-in required.")
    public static let sessionExpired = ProblemError(401, code: .sessionExpired, title: "The session has expired; sign in again.")
    /// A token of a session of an account that was erased: the device drops what it keeps of it.
    public static let accountClosed = ProblemError(
        401, code: .accountClosed, title: "This account no longer exists.",
        detail: "Its data was erased on request.")
    public static let staffOnly = ProblemError(403, code: .staffOnly, title: "Staff only.")

    /// 429 `rate_limited`, with the seconds to wait (the body's `retry_after` and Retry-After).
    public static func rateLimited(_ title: String, retryAfter seconds: Int, detail: String? = nil) -> ProblemError {
        var problem = ProblemError(429, code: .rateLimited, title: title, detail: detail)
        problem.retryAfter = seconds
        return problem
    }

    public static func notFound(_ what: String) -> ProblemError {
        ProblemError(404, code: .notFound, title: "Not found.", detail: what)
    }

    /// The most a request body may carry: 1 MiB (the spec's info says so).
    public static let maxBodyBytes = 1 << 20

    public static let payloadTooLarge = ProblemError(
        413, code: .payloadTooLarge, title: "The request body is too large.",
        detail: "A request body may carry at most \(maxBodyBytes) bytes (1 MiB).")

    public static let internalError = ProblemError(500, code: ._internal, title: "The server failed to answer.")
}

import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxCLI
import Synchronization

#if canImport(Testing)
    import Testing
#endif

/// A Raptor API whose every answer a test plans: a call with no plan fails the test (and throws),
/// so a command can never reach a real server by accident. Middlewares given by the context (the
/// session's bearer token) run in front of every call, as they would before the wire, and each
/// call is recorded with the authorization it carried.
public final class StubAPI: RaptorConnection, Sendable {
    public struct Call: Sendable, Equatable {
        public var operation: String
        /// The Authorization header the middlewares attached, if any.
        public var authorization: String?

        public init(operation: String, authorization: String?) {
            self.operation = operation
            self.authorization = authorization
        }
    }

    private let state = Mutex(State())

    private struct State {
        var answers: [String: @Sendable (Any) async throws -> Any] = [:]
        var recorded: [Call] = []
    }

    public init() {}

    /// Every call made so far, in order.
    public var calls: [Call] { state.withLock { $0.recorded } }
    /// The operations called so far, in order.
    public var operations: [String] { calls.map(\.operation) }

    public func api(middlewares: [any ClientMiddleware]) -> any APIProtocol {
        Client(stub: self, middlewares: middlewares)
    }

    func plan<Input, Output>(_ operation: String, _ answer: @escaping @Sendable (Input) async throws -> Output) {
        let planned: @Sendable (Any) async throws -> Any = { input in
            guard let typed = input as? Input else { throw StubError.wrongInput(operation) }
            return try await answer(typed)
        }
        state.withLock { $0.answers[operation] = planned }
    }

    func call<Input: Sendable, Output>(_ operation: String, _ input: Input, middlewares: [any ClientMiddleware]) async throws -> Output {
        let seen = HeaderBox()
        var next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?) = { request, _, _ in
            seen.fields = request.headerFields
            return (HTTPResponse(status: .ok), nil)
        }
        for middleware in middlewares.reversed() {
            let inner = next
            next = { request, body, url in
                try await middleware.intercept(request, body: body, baseURL: url, operationID: operation, next: inner)
            }
        }
        _ = try await next(
            HTTPRequest(method: .post, scheme: "https", authority: "stub.invalid", path: "/" + operation), nil,
            URL(fileURLWithPath: "/"))
        let call = Call(operation: operation, authorization: seen.fields[.authorization])
        let answer: (@Sendable (Any) async throws -> Any)? = state.withLock { state in
            state.recorded.append(call)
            return state.answers[operation]
        }
        guard let answer else {
            recordUnplanned("Unplanned call to the Raptor API: \(operation)")
            throw StubError.unplanned(operation)
        }
        guard let output = try await answer(input) as? Output else { throw StubError.wrongInput(operation) }
        return output
    }

    public enum StubError: Error, CustomStringConvertible {
        case unplanned(String)
        case wrongInput(String)

        public var description: String {
            switch self {
            case .unplanned(let op): "unplanned call to \(op)"
            case .wrongInput(let op): "the plan for \(op) does not fit its types"
            }
        }
    }

    private final class HeaderBox: Sendable {
        private let value = Mutex(HTTPFields())
        var fields: HTTPFields {
            get { value.withLock { $0 } }
            set { value.withLock { $0 = newValue } }
        }
    }

    /// The API as the context sees it: the stub behind the given middlewares.
    struct Client: APIProtocol {
        let stub: StubAPI
        let middlewares: [any ClientMiddleware]
    }
}

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
/// `RaptorService`, so that probing never runs a handler.
struct DecodeOnlyAPI: APIProtocol {
    struct Decoded: Error {}

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output { throw Decoded() }
    func registerOptions(_ input: Operations.RegisterOptions.Input) async throws -> Operations.RegisterOptions.Output { throw Decoded() }
    func registerVerify(_ input: Operations.RegisterVerify.Input) async throws -> Operations.RegisterVerify.Output { throw Decoded() }
    func loginOptions(_ input: Operations.LoginOptions.Input) async throws -> Operations.LoginOptions.Output { throw Decoded() }
    func loginVerify(_ input: Operations.LoginVerify.Input) async throws -> Operations.LoginVerify.Output { throw Decoded() }
    func stepUpOptions(_ input: Operations.StepUpOptions.Input) async throws -> Operations.StepUpOptions.Output { throw Decoded() }
    func stepUpVerify(_ input: Operations.StepUpVerify.Input) async throws -> Operations.StepUpVerify.Output { throw Decoded() }
    func listPasskeys(_ input: Operations.ListPasskeys.Input) async throws -> Operations.ListPasskeys.Output { throw Decoded() }
    func removePasskey(_ input: Operations.RemovePasskey.Input) async throws -> Operations.RemovePasskey.Output { throw Decoded() }
    func renewSession(_ input: Operations.RenewSession.Input) async throws -> Operations.RenewSession.Output { throw Decoded() }
    func logout(_ input: Operations.Logout.Input) async throws -> Operations.Logout.Output { throw Decoded() }
    func getSession(_ input: Operations.GetSession.Input) async throws -> Operations.GetSession.Output { throw Decoded() }
    func getPortfolio(_ input: Operations.GetPortfolio.Input) async throws -> Operations.GetPortfolio.Output { throw Decoded() }
    func getSyncChanges(_ input: Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output { throw Decoded() }
    func getSyncSummary(_ input: Operations.GetSyncSummary.Input) async throws -> Operations.GetSyncSummary.Output { throw Decoded() }
    func getInstruments(_ input: Operations.GetInstruments.Input) async throws -> Operations.GetInstruments.Output { throw Decoded() }
    func placeOrder(_ input: Operations.PlaceOrder.Input) async throws -> Operations.PlaceOrder.Output { throw Decoded() }
    func checkOrders(_ input: Operations.CheckOrders.Input) async throws -> Operations.CheckOrders.Output { throw Decoded() }
    func listOrders(_ input: Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output { throw Decoded() }
    func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output { throw Decoded() }
    func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output { throw Decoded() }
    func cancelOrdersAfter(_ input: Operations.CancelOrdersAfter.Input) async throws -> Operations.CancelOrdersAfter.Output { throw Decoded() }
    func listEvents(_ input: Operations.ListEvents.Input) async throws -> Operations.ListEvents.Output { throw Decoded() }
    func registerAPNsDevice(_ input: Operations.RegisterAPNsDevice.Input) async throws -> Operations.RegisterAPNsDevice.Output { throw Decoded() }
    func listAPNsDevices(_ input: Operations.ListAPNsDevices.Input) async throws -> Operations.ListAPNsDevices.Output { throw Decoded() }
    func revokeAPNsDevice(_ input: Operations.RevokeAPNsDevice.Input) async throws -> Operations.RevokeAPNsDevice.Output { throw Decoded() }
    func createDSRRequest(_ input: Operations.CreateDSRRequest.Input) async throws -> Operations.CreateDSRRequest.Output { throw Decoded() }
    func listDSRRequests(_ input: Operations.ListDSRRequests.Input) async throws -> Operations.ListDSRRequests.Output { throw Decoded() }
    func getDSRRequest(_ input: Operations.GetDSRRequest.Input) async throws -> Operations.GetDSRRequest.Output { throw Decoded() }
    func verifyDSRIdentity(_ input: Operations.VerifyDSRIdentity.Input) async throws -> Operations.VerifyDSRIdentity.Output { throw Decoded() }
    func extendDSRRequest(_ input: Operations.ExtendDSRRequest.Input) async throws -> Operations.ExtendDSRRequest.Output { throw Decoded() }
    func closeDSRRequest(_ input: Operations.CloseDSRRequest.Input) async throws -> Operations.CloseDSRRequest.Output { throw Decoded() }
    func exportDSRData(_ input: Operations.ExportDSRData.Input) async throws -> Operations.ExportDSRData.Output { throw Decoded() }
    func confirmDSRExport(_ input: Operations.ConfirmDSRExport.Input) async throws -> Operations.ConfirmDSRExport.Output { throw Decoded() }
    func checkDSRErasurePlan(_ input: Operations.CheckDSRErasurePlan.Input) async throws -> Operations.CheckDSRErasurePlan.Output { throw Decoded() }
    func planDSRErasure(_ input: Operations.PlanDSRErasure.Input) async throws -> Operations.PlanDSRErasure.Output { throw Decoded() }
    func applyDSRErasure(_ input: Operations.ApplyDSRErasure.Input) async throws -> Operations.ApplyDSRErasure.Output { throw Decoded() }
    func getDSRReceipt(_ input: Operations.GetDSRReceipt.Input) async throws -> Operations.GetDSRReceipt.Output { throw Decoded() }
    func getDSRReceiptKey(_ input: Operations.GetDSRReceiptKey.Input) async throws -> Operations.GetDSRReceiptKey.Output { throw Decoded() }
    func listSubjectAuditEvents(_ input: Operations.ListSubjectAuditEvents.Input) async throws -> Operations.ListSubjectAuditEvents.Output { throw Decoded() }
    func listAuditEvents(_ input: Operations.ListAuditEvents.Input) async throws -> Operations.ListAuditEvents.Output { throw Decoded() }
}

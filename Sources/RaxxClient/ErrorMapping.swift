import Foundation
import OpenAPIRuntime
import RaxxAPI
import RaxxCore

/// Turns whatever a client call threw into the one `RaxxError` a person sees: offline failures get
/// the standard message and exit 69; no message shows an HTTP status.
public enum ErrorMapping {
    public static func raxxError(from error: any Error) -> RaxxError {
        switch error {
        case let e as RaxxError:
            return e
        case let e as ClientError:
            return raxxError(from: e.underlyingError)
        case let f as TransportFailure:
            switch f.kind {
            case .offlineHard: return .offline(.offlineHard)
            case .offlineSoft: return .offline(.offlineSoft)
            case .cancelled: return .cancelled
            case .tooLarge: return .answerTooLarge
            case .policy: return .usage("Refusing to connect: \(f.detail).", hint: "Check RAXX_API_URL.")
            case .tls:
                return RaxxError(
                    code: .tlsFailure, message: "Could not verify the server's identity.",
                    hint: "The connection may be intercepted (for example by a captive portal). Try another network.")
            case .other:
                return RaxxError(code: .transport, message: "The request could not be completed (\(f.detail)).")
            }
        case let u as UnhealthyServer:
            if u.status == 429 { return .rateLimited(retryAfter: u.retryAfter) }
            return .offline(.offlineSoft)
        case is CancellationError:
            return .cancelled
        case is DecodingError:
            return RaxxError(
                code: .badResponse, message: "The server's answer could not be read.",
                hint: "The server may run another version of the API.")
        default:
            return RaxxError(code: .internal, message: "Unexpected error: \(error).")
        }
    }

    /// The transport failure behind `error`, if that is what it was.
    public static func transportFailure(in error: any Error) -> TransportFailure? {
        switch error {
        case let f as TransportFailure: f
        case let e as ClientError: transportFailure(in: e.underlyingError)
        default: nil
        }
    }

    /// The error shows the server could not be reached (or answered as an unhealthy one does):
    /// what a loop that waits for the network to come back (`Backoff`) retries on.
    public static func isOffline(_ error: any Error) -> Bool {
        connectivity(of: error)?.isOffline ?? false
    }

    /// What `error` shows of the network: offline (hard or soft) when the server could not be
    /// reached or answered as an unhealthy one does; nil when it says nothing about the network.
    public static func connectivity(of error: any Error) -> Connectivity? {
        switch error {
        case let e as ClientError: return connectivity(of: e.underlyingError)
        case let f as TransportFailure: return f.connectivity == .unknown ? nil : f.connectivity
        case is UnhealthyServer: return .offlineSoft
        case let e as RaxxError: return e.connectivity
        default: return nil
        }
    }

    /// A problem+json answer from Raptor, mapped to an exit status by its stable code.
    public static func raxxError(problem: Components.Schemas.Problem) -> RaxxError {
        let message = problem.detail ?? problem.title
        let status: ExitStatus
        var hint: String? = nil
        // By the spec's codes; one a newer server added maps by what it says (a failure).
        switch Components.Schemas.ProblemCode(rawValue: problem.code) {
        case .unauthorized?, .sessionExpired?:
            return .signInRequired
        case .accountClosed?:
            return .accountClosed
        case .forbidden?, .staffOnly?, .stepUpRequired?, .stepUpInvalid?, .liveTradingRefused?:
            status = .notPermitted
        case .rateLimited?:
            return .rateLimited(retryAfter: problem.retryAfter)
        case .planStale?:
            return RaxxError(
                server: problem.code, message: "The plan is stale.", hint: "The data changed since it was made: plan again (raxx-dsr plan).",
                status: .temporary)
        case .unavailable?:
            return .offline(.offlineSoft)
        case .lastPasskey?:
            return RaxxError(server: problem.code, message: problem.title, hint: problem.detail, status: .notPermitted)
        case .codeInvalid?, .codeExpired?:
            // What happened, then what to do (tries left, or ask for a new code).
            return RaxxError(server: problem.code, message: problem.title, hint: problem.detail, status: .dataError)
        case .badRequest?, .unknownSymbol?, .cursorInvalid?, .payloadTooLarge?:
            status = .dataError
        // What the person does next, with the command that does it (the server, speaking to
        // every client, names none).
        case .identityUnverified?:
            return RaxxError(
                server: problem.code, message: "Verify the requester's identity first: raxx-dsr verify-identity ID --method TEXT",
                hint: "TEXT says how it was verified (a reply from the account's email, say).", status: .failure)
        case .planRequired?:
            status = .failure
            hint = "Plan the erasure first: raxx-dsr plan ID; then apply its plan_hash."
        case .insufficientBuyingPower?:
            status = .failure
            hint = "See the buying power: raxx-cache show portfolio (after raxx-cache refresh)."
        case .insufficientPosition?:
            status = .failure
            hint = "See what is held: raxx-cache show positions (after raxx-cache refresh)."
        case .notCancellable?:
            status = .failure
            hint = "See where the order stands: raxx-order show ID."
        case .extensionRefused?:
            status = .failure
            hint = "See the request's deadline: raxx-dsr show ID."
        case .notImplemented?:
            status = .unavailable
            hint = "This server does not offer that yet."
        case .accountExists?, .algorithmUnsupported?, .attestationUnsupported?, .challengeInvalid?, .conflict?, .counterInvalid?,
            .credentialUnknown?, .deadlinePassed?, ._internal?,
            .invalidState?, .methodNotAllowed?, .notAcceptable?, .notFound?, .originMismatch?,
            .rpMismatch?, .signatureInvalid?, .userPresenceRequired?, .userVerificationRequired?, nil:
            status = .failure
        }
        return RaxxError(server: problem.code, message: message, hint: hint, status: status)
    }
}

extension Components.Responses.Problem {
    /// The problem+json answer as the error a person sees (see `ErrorMapping.raxxError(problem:)`).
    public var raxxError: RaxxError {
        get throws { ErrorMapping.raxxError(problem: try body.applicationProblemJson) }
    }
}

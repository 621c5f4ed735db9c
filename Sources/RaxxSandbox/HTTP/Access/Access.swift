import Foundation
import RaxxAPI

/// Who may call an operation. Every operation of the API is declared once, in `Access.table`;
/// `AccessGate` enforces the table before a handler runs, so handlers never authenticate by hand.
public enum Access: Sendable, Equatable {
    /// Anyone. A bearer token, if sent, is not looked at.
    case anonymous
    /// Anyone; but a bearer token, if sent, must be valid, and the handler then knows the caller
    /// (registration adds a passkey to the caller's own account this way).
    case signedInIfToken
    /// A live session's access token.
    case signedIn
    /// A live session of a staff member; anyone else signed in gets 403 `staff_only`.
    case staff
    /// Staff, and the handler spends a `Raxx-Step-Up-Grant` bound to the hash of the very action
    /// (applying an erasure plan: `ErasureApplyAction`), as with `.stepUp`.
    case staffStepUp
    /// Signed in, and the handler spends a `Raxx-Step-Up-Grant` bound to the hash of the very
    /// action. The grant is checked by the handler, not the gate: the action's hash is made from
    /// the body, and whether one is needed can depend on it (placeOrder asks only above the
    /// notional threshold).
    case stepUp

    /// Who may call each operation, by operation ID. An operation missing here is refused (500):
    /// the gate fails closed. A test checks that every operation of `APIProtocol` is listed.
    public static let table: [String: Access] = [
        // meta
        Operations.GetHealth.id: .anonymous,
        // auth
        Operations.RegisterOptions.id: .signedInIfToken,
        Operations.RegisterVerify.id: .anonymous,
        Operations.LoginOptions.id: .anonymous,
        Operations.LoginVerify.id: .anonymous,
        Operations.StepUpOptions.id: .signedIn,
        Operations.StepUpVerify.id: .signedIn,
        Operations.ListPasskeys.id: .signedIn,
        Operations.RemovePasskey.id: .stepUp,  // bound to the passkey removed
        // session
        Operations.RenewSession.id: .anonymous,  // the renewal token in the body is the credential
        Operations.Logout.id: .signedIn,
        Operations.GetSession.id: .signedIn,
        Operations.ListSessions.id: .signedIn,
        // sync (the spec's "read" tag)
        Operations.GetPortfolio.id: .signedIn,
        Operations.GetSyncChanges.id: .signedIn,
        Operations.GetSyncSummary.id: .signedIn,
        // instruments
        Operations.GetInstruments.id: .signedIn,
        // orders
        Operations.PlaceOrder.id: .stepUp,  // above the notional threshold only
        Operations.CheckOrders.id: .signedIn,  // a dry run: nothing is placed, no grant is spent
        Operations.ListOrders.id: .signedIn,
        Operations.GetOrder.id: .signedIn,
        Operations.CancelOrder.id: .signedIn,
        Operations.CancelOrdersAfter.id: .signedIn,  // the caller's own session's switch
        // events
        Operations.ListEvents.id: .signedIn,
        // devices
        Operations.RegisterAPNsDevice.id: .signedIn,
        Operations.ListAPNsDevices.id: .signedIn,
        Operations.RevokeAPNsDevice.id: .signedIn,
        // dsr: support staff only (403 staff_only, audited); applying an erasure also needs a
        // step-up bound to the plan, spent by the handler like an order's.
        Operations.CreateDSRRequest.id: .staff,
        Operations.ListDSRRequests.id: .staff,
        Operations.GetDSRRequest.id: .staff,
        Operations.VerifyDSRIdentity.id: .staff,
        Operations.ExtendDSRRequest.id: .staff,
        Operations.CloseDSRRequest.id: .staff,
        Operations.ExportDSRData.id: .staff,
        Operations.ConfirmDSRExport.id: .staff,
        Operations.PlanDSRErasure.id: .staff,
        Operations.CheckDSRErasurePlan.id: .staff,  // a read: nothing is recorded
        Operations.ApplyDSRErasure.id: .staffStepUp,
        Operations.GetDSRReceipt.id: .staff,
        Operations.GetDSRReceiptKey.id: .anonymous,  // a public key: anyone may verify a receipt
        Operations.ListSubjectAuditEvents.id: .staff,
        // audit: the caller's own trail
        Operations.ListAuditEvents.id: .signedIn,
    ]
}

/// The signed-in caller of a request.
public struct Caller: Sendable, Equatable {
    public var userID: String
    public var accountID: String
    public var sessionID: String
    public var staff: Bool

    public init(userID: String, accountID: String, sessionID: String, staff: Bool = false) {
        self.userID = userID
        self.accountID = accountID
        self.sessionID = sessionID
        self.staff = staff
    }
}

/// Enforces `Access.table` for one request: looks up the bearer token (once) when the operation
/// needs or accepts a caller, and refuses with 401 or 403 problems.
///
/// It runs in `RaptorService`, after the generated server has decoded the input, so that input
/// the server cannot decode still answers 400 before any sign-in question, as it always has.
struct AccessGate: Sendable {
    let sessions: SessionStore
    let clock: @Sendable () -> Date
    var table: [String: Access] = Access.table
    /// Where refusals of signed-in callers (staff only) are audited, each in its own transaction.
    var audit: AuditStore? = nil

    /// Checks the caller against `operationID`'s entry and answers the caller, if one was
    /// established. `token` defaults to the request's bearer token.
    func check(_ operationID: String, token: String?? = nil) async throws -> Caller? {
        guard let access = table[operationID] else { throw ProblemError.internalError }
        let token = token ?? RequestIdentity.bearerToken
        switch access {
        case .anonymous:
            return nil
        case .signedInIfToken:
            guard let token else { return nil }
            return try await authenticate(token)
        case .signedIn, .stepUp:
            guard let token else { throw ProblemError.unauthorized }
            return try await authenticate(token)
        case .staff, .staffStepUp:
            guard let token else { throw ProblemError.unauthorized }
            let caller = try await authenticate(token)
            guard caller.staff else {
                try? await audit?.record(
                    AuditEntry(
                        at: clock(), actor: caller.userID, action: .accessRefused, subject: caller.userID,
                        details: [
                            "operation": operationID, "reason": ProblemError.staffOnly.code.rawValue,
                            "session_id": caller.sessionID,
                        ]))
                throw ProblemError.staffOnly
            }
            return caller
        }
    }

    /// `check` for an operation whose handler needs a caller: its table entry must not let
    /// anonymous callers in (a misdeclared entry answers 500 rather than run without one).
    func caller(_ operationID: String) async throws -> Caller {
        guard let caller = try await check(operationID) else { throw ProblemError.internalError }
        return caller
    }

    /// `operationID`'s request, checked, to `handler`, which takes no caller (the anonymous
    /// operations). The forwarders (RaptorService+Operations.swift) all call `forward`; the
    /// handler's own signature says what it needs.
    func forward<Input, Output>(
        _ operationID: String, _ input: Input, to handler: (Input) async throws -> Output
    ) async throws -> Output {
        _ = try await check(operationID)
        return try await handler(input)
    }

    /// `operationID`'s request to `handler`, with its signed-in caller.
    func forward<Input, Output>(
        _ operationID: String, _ input: Input, to handler: (Input, Caller) async throws -> Output
    ) async throws -> Output {
        try await handler(input, caller(operationID))
    }

    /// `operationID`'s request to `handler`, which asks for its caller, if there is one, when it
    /// needs it (after its own checks of the input: `Access.signedInIfToken`).
    func forward<Input, Output>(
        _ operationID: String, _ input: Input, to handler: (Input, () async throws -> Caller?) async throws -> Output
    ) async throws -> Output {
        try await handler(input, { try await check(operationID) })
    }

    /// The caller behind an access token, or a 401 problem.
    func authenticate(_ token: String) async throws -> Caller {
        switch try await sessions.lookup(accessTokenHash: Tokens.hash(token), now: clock()) {
        case .unknown, .revoked: throw ProblemError.unauthorized
        case .accountClosed: throw ProblemError.accountClosed
        case .expired: throw ProblemError.sessionExpired
        case .live(let caller): return caller
        }
    }
}

import Foundation
import RaxxAPI
import RaxxDomain

/// A request as the state machine sees it.
struct DSRState: Sendable, Equatable {
    var id: String
    var kind: Components.Schemas.DSRKind
    var status: Components.Schemas.DSRStatus
    var subject: String
    var ticket: String
    var receivedAt: Date
    var dueOn: String
    var extended: Bool
    var planHash: String?
}

/// What a transition changes, and how it is audited.
struct DSRUpdate: Sendable {
    var status: Components.Schemas.DSRStatus?
    var dueOn: String?
    var extensionReason: String?
    var verificationMethod: String?
    var closedReason: String?
    /// The audit action (`dsr.verified`, …); the entry carries the staff member and the ticket.
    var auditAction: AuditAction
    var auditDetails: [String: String] = [:]
}

/// The states of a data-subject request and what may happen in each:
/// identity_unverified → verified → completed (access: exported) or → planned → erasing →
/// completed (erasure); cancelled or refused from any state before erasing. Pure: the store
/// runs it on the current state inside the transaction that applies its verdict.
enum DSRStateMachine {
    static func invalid(_ state: DSRState, _ what: String) -> ProblemError {
        ProblemError(409, code: .invalidState, title: "The request cannot \(what).", detail: "It is \(state.status.rawValue).")
    }

    static func verify(_ s: DSRState, method: String) throws -> DSRUpdate {
        guard s.status == .identityUnverified else { throw invalid(s, "be verified again") }
        return DSRUpdate(status: .verified, verificationMethod: method, auditAction: .dsrIdentityVerified, auditDetails: ["method": method])
    }

    static func extend(_ s: DSRState, reason: String, today: CalendarDay) throws -> DSRUpdate {
        guard ![.completed, .cancelled, .refused].contains(s.status) else { throw invalid(s, "be extended") }
        if let refusal = DSRDeadline.extensionRefusal(receivedAt: s.receivedAt, alreadyExtended: s.extended, today: today) {
            throw ProblemError(409, code: .extensionRefused, title: "The request cannot be extended.", detail: refusal)
        }
        let due = DSRDeadline.extendedDue(receivedAt: s.receivedAt).description
        return DSRUpdate(dueOn: due, extensionReason: reason, auditAction: .dsrExtended, auditDetails: ["reason": reason, "due_on": due])
    }

    static func close(_ s: DSRState, to: Components.Schemas.DSRStatus, reason: String) throws -> DSRUpdate {
        guard [.identityUnverified, .verified, .planned].contains(s.status) else { throw invalid(s, "be \(to.rawValue)") }
        return DSRUpdate(status: to, closedReason: reason, auditAction: .dsrClosed(to), auditDetails: ["reason": reason])
    }

    /// A staff member's own request is handled by another staff member: one whose email (`staff`)
    /// is the request's subject neither opens it nor takes any step of it.
    static func checkHandler(subject: String, staff: String) throws {
        guard subject.lowercased() != staff.lowercased() else {
            throw ProblemError(
                403, code: .forbidden, title: "A staff member's own request is handled by another staff member.",
                detail: "Ask another member of the support staff.")
        }
    }

    @Sendable static func checkExport(_ s: DSRState) throws {
        guard s.kind == .access else {
            throw ProblemError(409, code: .invalidState, title: "Only an access request is exported.", detail: "\(s.id) is an erasure request.")
        }
        guard s.status == .verified || s.status == .completed else {
            throw s.status == .identityUnverified
                ? ProblemError(409, code: .identityUnverified, title: "Verify the requester's identity first.", detail: "\(s.id) is identity_unverified.")
                : invalid(s, "be exported")
        }
    }

    @Sendable static func checkPlan(_ s: DSRState) throws {
        guard s.kind == .erasure else {
            throw ProblemError(409, code: .invalidState, title: "Only an erasure request has a plan.", detail: "\(s.id) is an access request.")
        }
        guard s.status == .verified || s.status == .planned else {
            throw s.status == .identityUnverified
                ? ProblemError(409, code: .identityUnverified, title: "Verify the requester's identity first.", detail: "\(s.id) is identity_unverified.")
                : invalid(s, "be planned")
        }
    }
}

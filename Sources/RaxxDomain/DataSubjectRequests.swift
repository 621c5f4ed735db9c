import Foundation
import RaxxCore
import RaxxWire

/// What a staff member's step-up for an erasure is bound to: applying exactly this plan to
/// exactly this request. The client asks for the grant with its hash; the sandbox recomputes it
/// from the request it receives.
public struct ErasureApplyAction: StepUpAction, Equatable {
    public var action = "dsr.erasure.apply"
    public var plan_hash: String
    public var request_id: String

    public init(requestID: String, planHash: String) {
        request_id = requestID
        plan_hash = planHash
    }
}

/// What a step-up to remove a passkey is bound to: removing exactly this passkey.
public struct PasskeyRemovalAction: StepUpAction, Equatable {
    public var action = "passkey.remove"
    public var passkey_id: String

    public init(passkeyID: String) { passkey_id = passkeyID }
}

/// GDPR Art. 12(3)'s deadlines for a data-subject request: one month from receipt, extendable
/// once by two further months, and only while the first month runs.
public enum DSRDeadline {
    /// Due one month after the day of receipt (clamped to the month's end).
    public static func due(receivedAt: Date) -> CalendarDay { CalendarDay(receivedAt).addingMonths(1) }

    /// Due three months after the day of receipt (the first month plus the two of an extension).
    public static func extendedDue(receivedAt: Date) -> CalendarDay { CalendarDay(receivedAt).addingMonths(3) }

    /// Why an extension is refused on `today`, or nil when it may be granted.
    public static func extensionRefusal(receivedAt: Date, alreadyExtended: Bool, today: CalendarDay) -> String? {
        if alreadyExtended { return "The request was extended already; it can be extended only once." }
        if today > due(receivedAt: receivedAt) {
            return "The first month ended on \(due(receivedAt: receivedAt)): an extension must be made within it."
        }
        return nil
    }

    /// A request still open is overdue once its due day has passed.
    public static func isOverdue(dueOn: CalendarDay, today: CalendarDay) -> Bool { today > dueOn }
}

/// The free text staff write on a data-subject request (its ticket, a verification method, the
/// reason for an extension or a closing): one rule for raxx-dsr, which refuses it before sending,
/// and the sandbox, which refuses it again. Text with an `@` is refused: a person is named by the
/// request's subject, never in free text, where an erasure, which replaces whole values, could not
/// find them.
public enum DSRText {
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case length(max: Int)
        case namesAnEmail

        public var description: String {
            switch self {
            case .length(let max): "must be 1 to \(max) characters"
            case .namesAnEmail: "must not hold an email address (the request's subject names the person; write what was done, not to whom)"
            }
        }
    }

    /// The longest ticket, and the longest other text.
    public static let ticketLength = 64
    public static let textLength = 500

    /// `text` trimmed, or why it is refused.
    public static func checked(_ text: String, max: Int = textLength) throws(Refusal) -> String {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !t.isEmpty, t.count <= max else { throw .length(max: max) }
        guard !t.contains("@") else { throw .namesAnEmail }
        return t
    }
}

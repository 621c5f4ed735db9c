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

/// A calendar day in UTC, written `YYYY-MM-DD`: what GDPR deadlines are counted in.
public struct CalendarDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    static var utc: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "UTC")!
        return c
    }

    /// The UTC day `date` falls on.
    public init(_ date: Date) {
        let parts = Self.utc.dateComponents([.year, .month, .day], from: date)
        self.init(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1)
    }

    /// `YYYY-MM-DD`, and only a day that exists.
    public init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1...12).contains(m), d >= 1, d <= Self.daysIn(year: y, month: m) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The same day `months` later, clamped to that month's last day when it has no such day
    /// (31 January plus one month is the last day of February).
    public func addingMonths(_ months: Int) -> CalendarDay {
        let index = year * 12 + (month - 1) + months
        let y = index / 12, m = index % 12 + 1
        return CalendarDay(year: y, month: m, day: min(day, Self.daysIn(year: y, month: m)))
    }

    /// `days` later (or earlier).
    public func addingDays(_ days: Int) -> CalendarDay {
        CalendarDay(start.addingTimeInterval(Double(days) * 86_400))
    }

    /// Midnight UTC at its start.
    public var start: Date {
        Self.utc.date(from: DateComponents(year: year, month: month, day: day)) ?? Date(timeIntervalSince1970: 0)
    }

    public var description: String { String(format: "%04d-%02d-%02d", year, month, day) }

    public static func < (a: CalendarDay, b: CalendarDay) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }
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

import Foundation
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire

/// Data-subject requests as staff see them: validation of what they type, deadlines, filters.
public enum DSRRequests {
    /// A well-formed email (lowercased), or exit 65 naming the field.
    public static func email(_ text: String, field: String = "email") throws(RaxxError) -> String {
        do {
            return try EmailAddress.normalized(text)
        } catch {
            throw RaxxError.badInput(field: field, "the email address \(error)")
        }
    }

    /// `--received-at`: a day (`2026-01-31`, taken at noon UTC) or an RFC 3339 time; not in the future.
    public static func receivedAt(_ text: String, now: Date) throws(RaxxError) -> Date {
        let date: Date
        if let day = CalendarDay(parsing: text) {
            date = day.start.addingTimeInterval(12 * 3600)
        } else if let time = RFC3339.date(from: text) {
            date = time
        } else {
            throw RaxxError.badInput(field: "received-at", "'\(text)' is not a date (2026-01-31) or an RFC 3339 time")
        }
        guard CalendarDay(date) <= CalendarDay(now) else {
            throw RaxxError.badInput(field: "received-at", "\(text) is in the future")
        }
        return date
    }

    /// A free-text field (ticket, reason, method), by `DSRText`'s rule.
    public static func text(_ text: String, field: String, max: Int = DSRText.textLength) throws(RaxxError) -> String {
        do {
            return try DSRText.checked(text, max: max)
        } catch {
            throw RaxxError.badInput(field: field, error.description)
        }
    }

    static let closed: Set<Components.Schemas.DSRStatus> = [.completed, .cancelled, .refused]

    /// Whether `request` is still open and due within `days` of `today` (overdue ones included).
    public static func isDue(_ request: Components.Schemas.DSRRequest, within days: Int, today: CalendarDay) -> Bool {
        guard !closed.contains(request.status), let due = CalendarDay(parsing: request.dueOn) else { return false }
        return due <= today.addingDays(days)
    }
}

import Foundation
import RaxxCore
import RaxxWire

/// `--since`: an RFC 3339 time, a date (`2026-11-21`), or a duration back from now (`2h`, `7d`).
public enum SinceArgument {
    /// An RFC 3339 time, a date (its midnight in `timeZone`, the local one: `TZ`), or a duration
    /// back from `now`.
    /// The zone is made only for a date (a read without --since never loads the zone data).
    public static func parse(_ text: String?, now: Date, timeZone: @autoclosure () -> TimeZone = .current) throws(RaxxError) -> Date? {
        guard let text else { return nil }
        if let d = RFC3339.date(from: text) { return d }
        if let ago = RaxxDuration(parsing: text) { return now.addingTimeInterval(-ago.seconds) }
        if let day = date(text, timeZone: timeZone()) { return day }
        throw RaxxError.usage(
            "--since takes an RFC 3339 time (2026-11-21T09:30:00Z), a date (2026-11-21, from its midnight here) "
                + "or a duration back from now (2h, 7d), not \(text).")
    }

    /// YYYY-MM-DD, a real date, at its midnight in `timeZone`.
    static func date(_ text: String, timeZone: TimeZone) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: year, month: month, day: day)
        guard components.isValidDate(in: calendar) else { return nil }
        return calendar.date(from: components)
    }
}

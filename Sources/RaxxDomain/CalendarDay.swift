import Foundation

/// A calendar day in UTC, written `YYYY-MM-DD`: what GDPR deadlines are counted in, and the
/// expiry of an option contract (which OCC symbols write YYMMDD).
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
            (1...12).contains(m), d >= 1, d <= Self.daysIn(year: y, month: m)
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// Whether the calendar has the day (not 31 February).
    public var exists: Bool { (1...12).contains(month) && day >= 1 && day <= Self.daysIn(year: year, month: month) }

    /// The day as an OCC symbol writes it: YYMMDD.
    public var yymmdd: String { Self.padded(year % 100, 2) + Self.padded(month, 2) + Self.padded(day, 2) }

    /// `n` in at least `width` digits, zeros in front.
    private static func padded(_ n: Int, _ width: Int) -> String {
        let digits = String(n)
        return digits.count < width ? String(repeating: "0", count: width - digits.count) + digits : digits
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

    public var description: String { Self.padded(year, 4) + "-" + Self.padded(month, 2) + "-" + Self.padded(day, 2) }

    public static func < (a: CalendarDay, b: CalendarDay) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }
}

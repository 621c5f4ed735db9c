import Foundation
import RaxxCore
import RaxxDomain
import RaxxWire

/// How text tables show values to people; JSON keeps the wire's forms (decimal strings, RFC 3339
/// UTC). Money: grouped thousands and two decimals. Prices: at their instrument's tick
/// (`PriceTick`). Times: in the local time zone (`TZ`), compactly, relative when recent.
public enum PeopleText {
    /// A price of `symbol` at its instrument's tick: "189.5" → "189.50", a stock under $1 "0.1234"
    /// → "0.1234", an average fill finer than the tick rounded to it.
    public static func price(_ text: String, of symbol: String) -> String {
        money(text, decimals: PriceTick.decimals(symbol: symbol, price: text))
    }

    /// "1732173.726" → "1,732,173.73", "-0.5" → "-0.50" (with `decimals`, 0 to 4: that many);
    /// rounded half away from zero. Text that is not a decimal number shows as it is.
    public static func money(_ text: String, decimals: Int = 2) -> String {
        let places = min(max(decimals, 0), 4)
        var body = Substring(text)
        var negative = false
        if body.first == "-" { negative = true; body = body.dropFirst() } else if body.first == "+" { body = body.dropFirst() }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.utf8.allSatisfy(isDigit) else { return text }
        let fraction = parts.count == 2 ? Array(parts[1].utf8) : []
        guard fraction.allSatisfy(isDigit) else { return text }
        // Whole digits then the decimals kept, as numbers; the next decimal rounds.
        var digits = whole.utf8.map { Int($0) - 48 } + (0..<places).map { $0 < fraction.count ? Int(fraction[$0]) - 48 : 0 }
        if fraction.count > places, fraction[places] >= UInt8(ascii: "5") {
            var i = digits.count - 1
            while i >= 0 {
                if digits[i] == 9 { digits[i] = 0; i -= 1 } else { digits[i] += 1; break }
            }
            if i < 0 { digits.insert(1, at: 0) }
        }
        var units = Array(digits.dropLast(places))
        while units.count > 1, units.first == 0 { units.removeFirst() }
        let cents = digits.suffix(places)
        var grouped = ""
        for (i, d) in units.enumerated() {
            if i > 0, (units.count - i) % 3 == 0 { grouped += "," }
            grouped += String(d)
        }
        let zero = units.allSatisfy { $0 == 0 } && cents.allSatisfy { $0 == 0 }
        return (negative && !zero ? "-" : "") + grouped + (places > 0 ? "." + cents.map(String.init).joined() : "")
    }

    /// Money with its sign always written, to the cent: "+1,234.50", "-0.75", "0.00".
    public static func signedMoney(ticks: Int64) -> String {
        let text = money(Money.cents(ticks: ticks))
        return text.first == "-" || text == "0.00" ? text : "+" + text
    }

    /// A P&L with its share of the cost: "+1,234.50 (+2.1 %)"; without a cost, the money alone.
    public static func pnl(ticks: Int64, percent: Double?) -> String {
        let money = signedMoney(ticks: ticks)
        guard let percent, percent.isFinite else { return money }
        let tenths = (percent * 10).rounded()
        let shown = tenths == 0 ? "0.0" : (tenths > 0 ? "+" : "-") + String(format: "%.1f", abs(tenths) / 10)
        return money + " (" + shown + " %)"
    }

    /// An instrument as a trader reads it: an option contract as "AAPL 18 Dec 26 190 C ×100"
    /// (underlying, expiry, strike, call or put, shares per contract), a ticker as it is.
    public static func instrument(_ symbol: String) -> String {
        guard case .option(let c) = InstrumentSymbol(parsing: symbol) else { return symbol }
        let yy = c.expiry.year % 100
        let expiry = "\(pad(c.expiry.day)) \(months[max(0, min(11, c.expiry.month - 1))]) \(pad(yy))"
        var strike = String(c.strikeThousandths / 1000)
        var fraction = c.strikeThousandths % 1000
        if fraction != 0 {
            var digits = 3
            while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
            let text = String(fraction)
            strike += "." + String(repeating: "0", count: digits - text.count) + text
        }
        return "\(c.underlying) \(expiry) \(strike) \(c.right.rawValue) ×\(InstrumentSymbol.option(c).multiplier)"
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// A time as a person at `now` in `timeZone` reads it: "just now" and "12m ago" within the
    /// hour; "14:03" the same day; "Nov 27 14:03" the same year; "2025-11-27" before. Times to
    /// come (a deadline) within the hour read "in 12m".
    public static func time(_ date: Date, now: Date, timeZone: TimeZone) -> String {
        let seconds = now.timeIntervalSince(date)
        if seconds >= 0, seconds < 60 { return "just now" }
        if seconds >= 60, seconds < 3600 { return "\(Int(seconds / 60))m ago" }
        if seconds < 0, seconds > -3600 { return "in \(max(1, Int((-seconds / 60).rounded(.up))))m" }
        return clockFace(date, now: now, timeZone: timeZone, dayWithTime: false)
    }

    /// Where `date` falls in `timeZone`, seen from `now`: "14:03" the same day, "Nov 27 14:03"
    /// the same year, before that the day ("2025-11-27"), with its time when `dayWithTime`.
    private static func clockFace(_ date: Date, now: Date, timeZone: TimeZone, dayWithTime: Bool) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let d = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let n = calendar.dateComponents([.year, .month, .day], from: now)
        guard let year = d.year, let month = d.month, let day = d.day, let hour = d.hour, let minute = d.minute else {
            return RFC3339.string(from: date)
        }
        let hm = pad(hour) + ":" + pad(minute)
        if year == n.year, month == n.month, day == n.day { return hm }
        if year == n.year { return "\(months[month - 1]) \(day) \(hm)" }
        return "\(year)-\(pad(month))-\(pad(day))" + (dayWithTime ? " " + hm : "")
    }

    /// A time as a sentence says it (a banner, a deadline, when a session lapses): where it falls
    /// in `timeZone`, compactly ("14:03" the same day, "Nov 27 14:03" the same year,
    /// "2025-11-27 14:03" before), with how long ago or until when it is within a day ("14:03
    /// (12m ago)", "09:30 (in 11h)"), from the same reading of the clock as `time` (the tables'
    /// form), so that a banner and the rows below it agree.
    public static func moment(_ date: Date, now: Date, timeZone: TimeZone) -> String {
        let at = clockFace(date, now: now, timeZone: timeZone, dayWithTime: true)
        let seconds = now.timeIntervalSince(date)
        guard abs(seconds) < 86_400 else { return at }
        // Exact within the hour (a 30-second deadline is "in 30s"), its largest unit beyond.
        let span = RaxxDuration(seconds: abs(seconds).rounded())
        let text = abs(seconds) < 3600 ? span.description : span.roughly
        if seconds >= 0 { return at + (seconds < 1 ? " (just now)" : " (\(text) ago)") }
        return at + " (in \(text))"
    }

    private static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}

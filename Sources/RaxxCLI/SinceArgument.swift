import Foundation
import RaxxCore
import RaxxWire

/// `--since`: an RFC 3339 time, or a duration back from now (`2h`, `7d`).
public enum SinceArgument {
    public static func parse(_ text: String?, now: Date) throws(RaxxError) -> Date? {
        guard let text else { return nil }
        if let d = RFC3339.date(from: text) { return d }
        if let ago = RaxxDuration(parsing: text) { return now.addingTimeInterval(-ago.seconds) }
        throw RaxxError.usage("--since takes an RFC 3339 time (2026-11-21T09:30:00Z) or a duration back from now (2h, 7d), not \(text).")
    }
}

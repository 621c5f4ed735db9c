/// The exit statuses every Raxx tool uses (sysexits-style where one fits).
public enum ExitStatus: Int32, Sendable, CaseIterable, Codable {
    case ok = 0
    case failure = 1
    case cancelled = 2
    /// Cached data is older than `--max-age` (or there is none yet).
    case stale = 3
    case signInRequired = 4
    case usage = 64
    case dataError = 65
    /// Offline, or the service is unavailable.
    case unavailable = 69
    /// Temporary: a lock is busy or the server asked us to slow down.
    case temporary = 75
    /// Not permitted: the paper-first gate, a refused step-up, staff only.
    case notPermitted = 77

    public var summary: String {
        switch self {
        case .ok: "ok"
        case .failure: "failure"
        case .cancelled: "cancelled"
        case .stale: "cached data older than --max-age, or no cached data"
        case .signInRequired: "sign-in required"
        case .usage: "usage error"
        case .dataError: "bad input data"
        case .unavailable: "offline or service unavailable"
        case .temporary: "temporary failure (lock busy, rate-limited)"
        case .notPermitted: "not permitted (paper-first gate, step-up refused, staff only)"
        }
    }
}

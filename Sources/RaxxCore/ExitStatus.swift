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
    /// Stopped by SIGINT (128 + 2), having said what became of the work (raxx-notify push).
    case interrupted = 130
    /// Stopped by SIGTERM (128 + 15), the same way.
    case terminated = 143
}

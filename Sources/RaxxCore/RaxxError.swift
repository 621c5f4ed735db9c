/// The one error type the tools report. Every error has a stable machine `code`, a message for a
/// person (never an HTTP status or a stack trace), an optional hint, and an exit status.
public struct RaxxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One of `ErrorCode`'s, or a code the server answered with (Raptor's `ProblemCode`).
    public private(set) var code: String
    public var message: String
    public var hint: String?
    public private(set) var status: ExitStatus
    /// What the error shows of the network, when it comes from being offline (hard or soft).
    public var connectivity: Connectivity?

    /// An error of the tools' own: its exit status is its code's (raxx(7) lists them).
    public init(code: ErrorCode, message: String, hint: String? = nil, connectivity: Connectivity? = nil) {
        self.init(code.rawValue, message: message, hint: hint, status: code.status, connectivity: connectivity)
    }

    /// A run stopped by a signal: 130 for SIGINT (`.interrupted`), 143 for SIGTERM (`.terminated`).
    public init(code: ErrorCode, message: String, hint: String? = nil, stoppedBy status: ExitStatus) {
        precondition(code.status == .interrupted && (status == .interrupted || status == .terminated), "not a stop: \(code)")
        self.init(code.rawValue, message: message, hint: hint, status: status, connectivity: nil)
    }

    /// An error the server answered with: its code as it came (a newer server may add codes), and
    /// the status the client gives it.
    public init(server code: String, message: String, hint: String? = nil, status: ExitStatus) {
        self.init(code, message: message, hint: hint, status: status, connectivity: nil)
    }

    private init(_ code: String, message: String, hint: String?, status: ExitStatus, connectivity: Connectivity?) {
        self.code = code
        self.message = message
        self.hint = hint
        self.status = status
        self.connectivity = connectivity
    }

    /// Whether this is an error of the tools' own with `code`.
    public func `is`(_ code: ErrorCode) -> Bool { self.code == code.rawValue }

    public var description: String { message }
}

extension RaxxError {
    /// The standard message for a network-required action met while offline.
    public static let offlineMessage = "This action requires an internet connection. Try again when online."

    public static func offline(_ state: Connectivity, hint: String? = nil) -> RaxxError {
        RaxxError(
            code: state == .offlineHard ? .offline : .unavailable, message: offlineMessage, hint: hint ?? state.hint,
            connectivity: state)
    }

    public static func rateLimited(retryAfter seconds: Int?) -> RaxxError {
        RaxxError(
            code: .rateLimited, message: "The server asked us to slow down.",
            hint: seconds.map { "Try again in \(RaxxDuration.seconds(Int64($0)))." } ?? "Try again in a moment.",
            connectivity: .offlineSoft)
    }

    public static func usage(_ message: String, hint: String? = nil) -> RaxxError {
        RaxxError(code: .usage, message: message, hint: hint)
    }

    /// Bad input data: names the line (when there is one) and the field.
    public static func badInput(line: Int? = nil, field: String? = nil, _ message: String) -> RaxxError {
        var place: [String] = []
        if let line { place.append("line \(line)") }
        if let field { place.append("field '\(field)'") }
        let prefix = place.isEmpty ? "" : place.joined(separator: ", ") + ": "
        return RaxxError(code: .badInput, message: prefix + message)
    }

    /// Every bad line of an input in one error: one alone as it is; several, each on a line of
    /// the message (the first `shown` of them), with `then` (what came of it) after the count.
    public static func badInput(all problems: [RaxxError], then: String, shown: Int = 50) -> RaxxError {
        guard problems.count > 1 else {
            let only = problems.first ?? .badInput("bad input")
            var one = only
            one.message += "; " + then
            return one
        }
        var lines = problems.prefix(shown).map { "  " + $0.message }
        if problems.count > shown { lines.append("  … and \(problems.count - shown) more") }
        return RaxxError(code: .badInput, message: "\(problems.count) lines are bad; \(then):\n" + lines.joined(separator: "\n"))
    }

    public static let signInRequired = RaxxError(code: .signInRequired, message: "Sign in again: raxx-auth login")

    /// The server says the signed-in account no longer exists (it was erased). What this device
    /// kept of it is removed before the error is reported (`LiveRun`).
    public static let accountClosed = RaxxError(
        code: .accountClosed, message: "This account no longer exists: its data was erased on request.",
        hint:
            """
            What this device kept of it (passkey, session, cache, orders, alerts) is removed. To trade again, open a new account: raxx-auth \
            register --email you@example.com
            """
    )

    public static let cancelled = RaxxError(code: .cancelled, message: "Cancelled.")

    /// The server's answer went past the most the client reads of it (RaxxClient's `AnswerCeiling`):
    /// the transfer was stopped and nothing of the answer was used.
    public static let answerTooLarge = RaxxError(
        code: .answerTooLarge, message: "The server's answer was too large to read.",
        hint: "The server may run another version of the API, or not be Raptor: check RAXX_API_URL.")
}

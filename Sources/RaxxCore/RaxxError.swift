/// The one error type the tools report. Every error has a stable machine `code`, a message for a
/// person (never an HTTP status or a stack trace), an optional hint, and an exit status.
public struct RaxxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var message: String
    public var hint: String?
    public var status: ExitStatus
    /// What the error shows of the network, when it comes from being offline (hard or soft).
    public var connectivity: Connectivity?

    public init(code: String, message: String, hint: String? = nil, status: ExitStatus, connectivity: Connectivity? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
        self.status = status
        self.connectivity = connectivity
    }

    public var description: String { message }
}

extension RaxxError {
    /// The standard message for a network-required action met while offline.
    public static let offlineMessage = "This action requires an internet connection. Try again when online."

    public static func offline(_ state: Connectivity, hint: String? = nil) -> RaxxError {
        RaxxError(
            code: state == .offlineHard ? "offline" : "unavailable",
            message: offlineMessage,
            hint: hint ?? state.hint,
            status: .unavailable,
            connectivity: state
        )
    }

    public static func rateLimited(retryAfter seconds: Int?) -> RaxxError {
        RaxxError(
            code: "rate_limited",
            message: "The server asked us to slow down.",
            hint: seconds.map { "Try again in \(RaxxDuration.seconds(Int64($0)))." } ?? "Try again in a moment.",
            status: .temporary,
            connectivity: .offlineSoft
        )
    }

    public static func usage(_ message: String, hint: String? = nil) -> RaxxError {
        RaxxError(code: "usage", message: message, hint: hint, status: .usage)
    }

    /// Bad input data: names the line (when there is one) and the field.
    public static func badInput(line: Int? = nil, field: String? = nil, _ message: String) -> RaxxError {
        var place: [String] = []
        if let line { place.append("line \(line)") }
        if let field { place.append("field '\(field)'") }
        let prefix = place.isEmpty ? "" : place.joined(separator: ", ") + ": "
        return RaxxError(code: "bad_input", message: prefix + message, status: .dataError)
    }

    /// Every bad line of an input in one error: one alone as it is; several, each on a line of
    /// the message (the first `shown` of them), with `then` (what came of it) after the count.
    public static func badInput(all problems: [RaxxError], then: String, shown: Int = 50) -> RaxxError {
        guard problems.count > 1 else {
            let only = problems.first ?? .badInput("bad input")
            return RaxxError(code: only.code, message: only.message + "; " + then, hint: only.hint, status: only.status)
        }
        var lines = problems.prefix(shown).map { "  " + $0.message }
        if problems.count > shown { lines.append("  … and \(problems.count - shown) more") }
        return RaxxError(code: "bad_input", message: "\(problems.count) lines are bad; \(then):\n" + lines.joined(separator: "\n"),
                         status: .dataError)
    }

    public static let signInRequired = RaxxError(
        code: "sign_in_required",
        message: "Sign in again: raxx-auth login",
        status: .signInRequired
    )

    /// The server says the signed-in account no longer exists (it was erased). What this device
    /// kept of it is removed before the error is reported (`LiveRun`).
    public static let accountClosed = RaxxError(
        code: "account_closed",
        message: "This account no longer exists: its data was erased on request.",
        hint: "What this device kept of it (passkey, session, cache, orders, alerts) is removed. To trade again, open a new account: raxx-auth register --email you@example.com",
        status: .signInRequired
    )

    public static func notPermitted(code: String = "not_permitted", _ message: String, hint: String? = nil) -> RaxxError {
        RaxxError(code: code, message: message, hint: hint, status: .notPermitted)
    }

    public static func failure(code: String = "failure", _ message: String, hint: String? = nil) -> RaxxError {
        RaxxError(code: code, message: message, hint: hint, status: .failure)
    }

    public static let cancelled = RaxxError(code: "cancelled", message: "Cancelled.", status: .cancelled)

    /// The server's answer went past the most the client reads of it (RaxxClient's `AnswerCeiling`):
    /// the transfer was stopped and nothing of the answer was used.
    public static let answerTooLarge = RaxxError(
        code: "answer_too_large",
        message: "The server's answer was too large to read.",
        hint: "The server may run another version of the API, or not be Raptor: check RAXX_API_URL.",
        status: .unavailable
    )
}

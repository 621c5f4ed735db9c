import Foundation
import Synchronization

/// The budgets of the one-time codes a registration is proven with (options of `raxx-sandbox
/// serve`). A code has 8 digits; what keeps it from being guessed is that guesses are counted per
/// address, not per code, so asking for another code buys no more of them (an ask mails the live
/// code again, it never replaces it), and what keeps an address from being flooded is that mails
/// are counted per address and asks per client.
public struct RegistrationCodeLimits: Sendable, Equatable {
    /// Wrong codes an address may be tried with in any `guessWindow`, however many codes were
    /// asked for; then every try, the right code too, is refused until the oldest leaves the window.
    public var guessesPerAddress: Int
    /// Codes mailed to one address in any `mailWindow`.
    public var mailsPerAddress: Int
    /// Asks for a code one client (an IP address; an IPv6 /64) may make in any `clientWindow`. The
    /// default lets 20 accounts register from one loopback client within a minute.
    public var asksPerClient: Int
    /// Codes one client may present in any `clientWindow`, whatever the addresses: the budget per
    /// address alone would let one client guess at many addresses at once.
    public var guessesPerClient: Int

    public static let guessWindow: TimeInterval = 600
    public static let mailWindow: TimeInterval = 3600
    public static let clientWindow: TimeInterval = 60

    /// A live code with less than this left is not mailed again: a new one is.
    public static let resendLeast: TimeInterval = 120

    public init(guessesPerAddress: Int = 10, mailsPerAddress: Int = 5, asksPerClient: Int = 30, guessesPerClient: Int = 60) {
        self.guessesPerAddress = guessesPerAddress
        self.mailsPerAddress = mailsPerAddress
        self.asksPerClient = asksPerClient
        self.guessesPerClient = guessesPerClient
    }

    /// Seconds until one more event is allowed, when the `times` of the events so far in `window`
    /// already reach `limit`; nil when one more is allowed now.
    static func retryAfter(_ times: [Double], limit: Int, window: TimeInterval, now: Date) -> Int? {
        guard times.count >= limit else { return nil }
        // The window admits another once enough of the oldest have left it.
        let sorted = times.sorted()
        let freedAt = sorted[times.count - limit] + window
        return max(Int((freedAt - now.timeIntervalSince1970).rounded(.up)), 1)
    }
}

/// What became of an ask for a code.
enum CodeAsk: Sendable, Equatable {
    /// The address's code was mailed: its live one `again`, or a new one.
    case mailed(expiresAt: Date, again: Bool)
    /// The address had its mails for the hour.
    case limited(retryAfter: Int)
}

/// What each client did in the last `clientWindow` (asks for a code, or codes presented), in
/// memory: a client's address is not kept anywhere it would outlive the window.
final class ClientBudget: Sendable {
    private struct State {
        var times: [String: [Double]] = [:]
        var swept: Double = 0
    }
    private let state = Mutex(State())

    /// Counts one more of `client`'s; answers the seconds to wait instead when its budget is spent.
    func take(_ client: String, limit: Int, now: Date) -> Int? {
        let t = now.timeIntervalSince1970, window = RegistrationCodeLimits.clientWindow
        let key = Self.key(client)
        return state.withLock { state -> Int? in
            // The clients gone quiet are forgotten once a window, not at every request.
            if t - state.swept >= window {
                state.times = state.times.filter { $0.value.contains { $0 > t - window } }
                state.swept = t
            }
            let times = state.times[key, default: []].filter { $0 > t - window }
            if let wait = RegistrationCodeLimits.retryAfter(times, limit: limit, window: window, now: now) {
                state.times[key] = times
                return wait
            }
            state.times[key] = times + [t]
            return nil
        }
    }

    /// An IPv4 address as it is; an IPv6 one by its /64, which one client holds whole and can move
    /// about in at will.
    static func key(_ address: String) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard address.contains(":"), inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        return bytes.prefix(8).map { String(format: "%02x", $0) }.joined() + "/64"
    }
}

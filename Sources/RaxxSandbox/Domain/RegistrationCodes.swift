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
    /// Asks for a code one client (an IP address) may make in any `clientWindow`. The default lets
    /// 20 accounts register from one loopback client within a minute.
    public var asksPerClient: Int

    public static let guessWindow: TimeInterval = 600
    public static let mailWindow: TimeInterval = 3600
    public static let clientWindow: TimeInterval = 60

    public init(guessesPerAddress: Int = 10, mailsPerAddress: Int = 5, asksPerClient: Int = 30) {
        self.guessesPerAddress = guessesPerAddress
        self.mailsPerAddress = mailsPerAddress
        self.asksPerClient = asksPerClient
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

/// The asks of each client in the last `clientWindow`, in memory: a client's address is not kept
/// anywhere it would outlive the window.
final class ClientAskBudget: Sendable {
    private let asks = Mutex<[String: [Double]]>([:])

    /// Counts an ask of `client`; answers the seconds to wait instead when its budget is spent.
    func take(_ client: String, limit: Int, now: Date) -> Int? {
        let t = now.timeIntervalSince1970
        return asks.withLock { asks -> Int? in
            // Each ask forgets the windows that ended, so the table holds the last minute's clients.
            asks = asks.compactMapValues { times in
                let kept = times.filter { $0 > t - RegistrationCodeLimits.clientWindow }
                return kept.isEmpty ? nil : kept
            }
            let times = asks[client, default: []]
            if let wait = RegistrationCodeLimits.retryAfter(times, limit: limit, window: RegistrationCodeLimits.clientWindow, now: now) {
                return wait
            }
            asks[client] = times + [t]
            return nil
        }
    }
}

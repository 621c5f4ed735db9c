import Foundation
import RaxxAPNs
import Synchronization

/// Failures the endpoint plays on purpose, for tests and benchmarks of clients:
/// device tokens that answer 410 Unregistered, and a seeded share of otherwise valid pushes that
/// answer 429 TooManyRequests, 500 InternalServerError or 503 ServiceUnavailable.
public final class FailureScript: Sendable {
    /// Unregistered device tokens (lowercased) with APNs's timestamp in milliseconds, or nil for "now".
    public let unregistered: [String: Int64?]
    /// The share of valid pushes that fail, 0...1.
    public let failRate: Double

    private let dice: Mutex<SplitMix64>

    /// The answers a failing push gets, in the dice's order.
    public static let failures: [APNsReason] = [.tooManyRequests, .internalServerError, .serviceUnavailable]

    public init(unregistered: [String: Int64?] = [:], failRate: Double = 0, seed: UInt64 = 0) {
        self.unregistered = Dictionary(unregistered.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.failRate = min(max(failRate, 0), 1)
        self.dice = Mutex(SplitMix64(seed: seed))
    }

    /// The timestamp (ms) to answer 410 with, when `deviceToken` is scripted as unregistered.
    public func unregisteredTimestamp(_ deviceToken: String, now: Int64) -> Int64? {
        guard !unregistered.isEmpty, let entry = unregistered[deviceToken.lowercased()] else { return nil }
        return entry ?? now
    }

    /// Rolls the dice for one otherwise valid push: the failure it gets, or nil.
    public func roll() -> APNsReason? {
        guard failRate > 0 else { return nil }
        return dice.withLock { dice in
            let draw = Double(dice.next() >> 11) / Double(1 << 53)
            guard draw < failRate else { return nil }
            return Self.failures[Int(dice.next() % UInt64(Self.failures.count))]
        }
    }

    /// Reads a tokens file: one hex device token per line, optionally followed by a space and
    /// APNs's timestamp in milliseconds; blank lines and lines starting with # are skipped.
    public static func readUnregistered(_ text: String) throws(TokensFileError) -> [String: Int64?] {
        var tokens: [String: Int64?] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count <= 2, APNs.isWellFormedDeviceToken(fields[0]) else {
                throw TokensFileError(line: index + 1, message: "expected a hex device token (64 to 200 digits), then optionally a timestamp in milliseconds")
            }
            var timestamp: Int64?
            if fields.count == 2 {
                guard let value = Int64(fields[1]), value >= 0 else {
                    throw TokensFileError(line: index + 1, message: "the timestamp must be a whole number of milliseconds since 1970")
                }
                timestamp = value
            }
            tokens[fields[0].lowercased()] = .some(timestamp)  // .some: a nil timestamp still lists the token
        }
        return tokens
    }

    public struct TokensFileError: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }
}

/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64): the same seed gives the
/// same sequence on every platform, so a scripted run can be repeated.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import RaxxCore

/// Why a request got no HTTP answer, classified for the connectivity model.
public struct TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// No route: name resolution failed, connection refused, network unreachable.
        case offlineHard
        /// A route but no answer: timeouts, resets, an empty reply.
        case offlineSoft
        /// The server's identity could not be verified (TLS).
        case tls
        /// The URL is not allowed (plain http to a non-loopback host, another scheme).
        case policy
        /// The request was cancelled.
        case cancelled
        /// The answer went past its operation's ceiling (`AnswerCeiling`): the transfer was stopped.
        case tooLarge
        /// Anything else libcurl reports.
        case other
    }

    public var kind: Kind
    /// libcurl's CURLcode, when libcurl reported it.
    public var curlCode: Int?
    /// libcurl's own words, kept for tests and for the rare message that must name the cause (a policy refusal); never shown for an offline failure.
    public var detail: String

    public init(kind: Kind, curlCode: Int? = nil, detail: String) {
        self.kind = kind
        self.curlCode = curlCode
        self.detail = detail
    }

    public var description: String { "\(kind.rawValue): \(detail)" }

    /// The connectivity this failure shows.
    public var connectivity: Connectivity {
        switch kind {
        case .offlineHard: .offlineHard
        case .offlineSoft: .offlineSoft
        case .tls, .policy, .cancelled, .tooLarge, .other: .unknown
        }
    }

    /// Classifies a CURLcode (by number, so the table is readable and testable without libcurl).
    public static func kind(forCurlCode code: Int) -> Kind {
        switch code {
        case 5, 6, 7: .offlineHard  // couldn't resolve proxy / host, couldn't connect
        case 16, 18, 28, 52, 55, 56, 92: .offlineSoft  // HTTP/2 error, partial body, timeout, empty reply, send/recv error (reset)
        case 35, 51, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91: .tls
        case 1, 3: .policy  // unsupported protocol, malformed URL
        case 42: .cancelled  // aborted by callback
        default: .other
        }
    }
}

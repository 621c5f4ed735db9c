import Foundation
import RaxxCore

/// Apple's HTTP/2 provider API, as both sides of it here speak it: `raxx-notify push` and the
/// sandbox's dispatcher (clients), and `raxx-sandbox apns` (a local endpoint). One copy of the
/// rules, so the client's local refusals and the endpoint's answers cannot drift apart.
public enum APNs {
    /// The request path's prefix: `POST /3/device/<token>`.
    public static let pathPrefix = "/3/device/"
    /// Largest payload of a notification (other than VoIP), in bytes.
    public static let maxPayloadBytes = 4096
    /// Largest `apns-collapse-id`, in bytes.
    public static let maxCollapseIDBytes = 64
    /// Apple's endpoints.
    public static let productionURL = "https://api.push.apple.com"
    public static let sandboxURL = "https://api.sandbox.push.apple.com"

    /// Request and response header names.
    public enum Header {
        public static let authorization = "authorization"
        public static let topic = "apns-topic"
        public static let pushType = "apns-push-type"
        public static let priority = "apns-priority"
        public static let expiration = "apns-expiration"
        public static let collapseID = "apns-collapse-id"
        public static let id = "apns-id"
        public static let uniqueID = "apns-unique-id"
    }

    /// True for a device token APNs could accept: hex, an even number of digits, 64 to 200 of them.
    @inlinable  // specialised in the caller: unspecialised, this was a sizeable share of a push's cost
    public static func isWellFormedDeviceToken(_ token: some StringProtocol) -> Bool {
        let count = token.utf8.count
        guard (64...200).contains(count), count.isMultiple(of: 2) else { return false }
        return token.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(\.isASCIIHexDigit) }
            ?? token.utf8.allSatisfy(\.isASCIIHexDigit)
    }

    /// True for an `apns-id`: a UUID in canonical form (8-4-4-4-12 hex digits, either case), as APNs
    /// takes one, read in place. Foundation's `UUID(uuidString:)`, used before, also read dashes
    /// elsewhere and a space for a digit, and parsing a UUID was a tenth of a push's own work.
    @inlinable
    public static func isWellFormedID(_ id: some StringProtocol) -> Bool {
        func check(_ bytes: some Collection<UInt8>) -> Bool {
            guard bytes.count == 36 else { return false }
            var at = 0
            for byte in bytes {
                guard at == 8 || at == 13 || at == 18 || at == 23 ? byte == UInt8(ascii: "-") : byte.isASCIIHexDigit else { return false }
                at += 1
            }
            return true
        }
        return id.utf8.withContiguousStorageIfAvailable(check) ?? check(id.utf8)
    }
}

/// `apns-push-type`.
public enum APNsPushType: String, Sendable, CaseIterable, Codable {
    case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets
}

/// `apns-priority`: 10 at once, 5 with power in mind, 1 when the device is awake anyway.
public enum APNsPriority: Int, Sendable, CaseIterable, Codable {
    case immediate = 10
    case conserve = 5
    case low = 1
}

/// What a client does with an answer.
public enum APNsDisposition: Sendable, Equatable {
    /// 200.
    case delivered
    /// 410: the token is no longer valid for the topic (with APNs's timestamp).
    case unregistered
    /// Never worth sending again as it is.
    case permanent
    /// Worth sending again after a pause (429, 500, 503).
    case retryable
    /// The provider token is expired: mint a new one, once, and resend.
    case refreshProviderToken
}

/// The `reason` strings of Apple's error answers, with their status codes.
public enum APNsReason: String, Sendable, CaseIterable, Codable {
    case badCollapseId = "BadCollapseId"
    case badDeviceToken = "BadDeviceToken"
    case badExpirationDate = "BadExpirationDate"
    case badMessageId = "BadMessageId"
    case badPriority = "BadPriority"
    case badTopic = "BadTopic"
    case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
    case duplicateHeaders = "DuplicateHeaders"
    case idleTimeout = "IdleTimeout"
    case invalidPushType = "InvalidPushType"
    case missingDeviceToken = "MissingDeviceToken"
    case missingTopic = "MissingTopic"
    case payloadEmpty = "PayloadEmpty"
    case topicDisallowed = "TopicDisallowed"
    case badCertificate = "BadCertificate"
    case badCertificateEnvironment = "BadCertificateEnvironment"
    case expiredProviderToken = "ExpiredProviderToken"
    case forbidden = "Forbidden"
    case invalidProviderToken = "InvalidProviderToken"
    case missingProviderToken = "MissingProviderToken"
    case unrelatedKeyIdInToken = "UnrelatedKeyIdInToken"
    case badPath = "BadPath"
    case methodNotAllowed = "MethodNotAllowed"
    case expiredToken = "ExpiredToken"
    case unregistered = "Unregistered"
    case payloadTooLarge = "PayloadTooLarge"
    case tooManyProviderTokenUpdates = "TooManyProviderTokenUpdates"
    case tooManyRequests = "TooManyRequests"
    case internalServerError = "InternalServerError"
    case serviceUnavailable = "ServiceUnavailable"
    case shutdown = "Shutdown"

    /// The HTTP status Apple answers this reason with.
    public var status: Int {
        switch self {
        case .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
            .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
            .missingTopic, .payloadEmpty, .topicDisallowed:
            400
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken,
            .missingProviderToken, .unrelatedKeyIdInToken:
            403
        case .badPath: 404
        case .methodNotAllowed: 405
        case .expiredToken, .unregistered: 410
        case .payloadTooLarge: 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: 429
        case .internalServerError: 500
        case .serviceUnavailable, .shutdown: 503
        }
    }

    /// What a client does when it meets this reason.
    public var disposition: APNsDisposition {
        switch self {
        case .expiredToken, .unregistered: .unregistered
        case .expiredProviderToken: .refreshProviderToken
        case .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown, .idleTimeout: .retryable
        default: .permanent
        }
    }

    /// The disposition of an answer's status when its body names no reason we know.
    public static func disposition(status: Int, reason: String?) -> APNsDisposition {
        if status == 200 { return .delivered }
        if let reason, let known = APNsReason(rawValue: reason) { return known.disposition }
        switch status {
        case 410: return .unregistered
        case 429, 500, 502, 503, 504: return .retryable
        default: return .permanent
        }
    }
}

/// An error answer's body: `{"reason":"…","timestamp":…}` (timestamp in milliseconds, 410 only).
public struct APNsErrorBody: Codable, Sendable, Equatable {
    public var reason: String
    public var timestamp: Int64?

    public init(reason: String, timestamp: Int64? = nil) {
        self.reason = reason
        self.timestamp = timestamp
    }
}

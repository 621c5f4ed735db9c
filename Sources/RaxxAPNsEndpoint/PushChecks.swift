import Foundation
import RaxxAPNs

/// One request as the endpoint reads it off an HTTP/2 stream.
public struct PushRequest: Sendable {
    /// `:method`.
    public var method: String
    /// `:path`.
    public var path: String
    /// The regular (non-pseudo) header fields in arrival order, names lowercased as HTTP/2 sends them.
    public var headers: [(name: String, value: String)]
    /// The request body (the endpoint stops keeping it past `APNs.maxPayloadBytes + 1` bytes).
    public var body: [UInt8]

    public init(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The value of the first field named `name`.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}

/// A refusal: Apple's reason (and so its status), with the `apns-id` and device token when the
/// request carried usable ones, for the answer and the log.
public struct PushRefusal: Error, Sendable, Equatable {
    public var reason: APNsReason
    public var status: Int { reason.status }

    public init(_ reason: APNsReason) { self.reason = reason }
}

/// The parts of a request read before its provider token is looked at: APNs answers 405, 404 and
/// 403 before it reads the notification's own headers.
public struct PushHead: Sendable, Equatable {
    /// The device token from the path (as sent; compare lowercased).
    public var deviceToken: String
    /// The JWT from `authorization: bearer <jwt>`.
    public var bearer: String
}

/// A notification whose request passed every check that needs no state.
public struct CheckedNotification: Sendable, Equatable {
    public var topic: String
    /// `apns-push-type` as sent; nil when absent (APNs then assumes alert).
    public var pushType: APNsPushType?
    /// `apns-priority`, 10 when absent.
    public var priority: Int
    /// `apns-expiration` in seconds since 1970; nil when absent.
    public var expiration: Int64?
    public var collapseID: String?
    /// The payload: a JSON object of at most 4096 bytes.
    public var payload: [UInt8]
}

/// The checks APNs makes of a request that need no state: method, path, token format, headers,
/// payload. Each failure is the reason Apple documents for it.
public struct PushChecks: Sendable {
    /// When set, the one app topic this endpoint serves (and its push-type variants).
    public var topic: String?

    public init(topic: String? = nil) {
        self.topic = topic
    }

    /// Topic suffixes Apple defines for push types other than alert and background.
    static let topicSuffixes = [
        ".voip", ".complication", ".pushkit.fileprovider", ".push-type.liveactivity",
        ".push-type.pushtotalk", ".push-type.widgets",
    ]

    /// The request's `apns-id` when it is well formed; nil when absent or malformed.
    public static func requestedID(_ request: PushRequest) -> String? {
        guard let id = request.header(APNs.Header.id), APNs.isWellFormedID(id) else { return nil }
        return id
    }

    /// Method, path, repeated fields and the presence of a provider token.
    public func head(_ request: PushRequest) -> Result<PushHead, PushRefusal> {
        guard request.method == "POST" else { return .failure(.init(.methodNotAllowed)) }
        // The path is /3/device/<token>, nothing else (no query, no further segment).
        guard request.path.hasPrefix(APNs.pathPrefix) else { return .failure(.init(.badPath)) }
        let token = request.path.dropFirst(APNs.pathPrefix.count)
        guard !token.contains("/"), !token.contains("?") else { return .failure(.init(.badPath)) }
        var seen = Set<String>()
        for field in request.headers where !seen.insert(field.name).inserted {
            return .failure(.init(.duplicateHeaders))
        }
        guard let authorization = request.header(APNs.Header.authorization) else {
            return .failure(.init(.missingProviderToken))
        }
        let scheme = "bearer "
        guard authorization.count > scheme.count, authorization.prefix(scheme.count).lowercased() == scheme else {
            return .failure(.init(.invalidProviderToken))
        }
        let bearer = authorization.dropFirst(scheme.count).trimmingCharacters(in: .whitespaces)
        guard !bearer.isEmpty else { return .failure(.init(.missingProviderToken)) }
        return .success(PushHead(deviceToken: String(token), bearer: bearer))
    }

    /// The device token, the notification's headers and its payload.
    public func notification(_ request: PushRequest, deviceToken: String) -> Result<CheckedNotification, PushRefusal> {
        guard !deviceToken.isEmpty else { return .failure(.init(.missingDeviceToken)) }
        guard APNs.isWellFormedDeviceToken(deviceToken) else { return .failure(.init(.badDeviceToken)) }

        guard let topic = request.header(APNs.Header.topic), !topic.isEmpty else { return .failure(.init(.missingTopic)) }
        guard topic.utf8.allSatisfy(Self.isTopicByte) else { return .failure(.init(.badTopic)) }
        if let served = self.topic, topic != served,
            !Self.topicSuffixes.contains(where: { topic == served + $0 })
        {
            // With token-based authentication a team's key may push to any of the team's apps, so a
            // wrong topic is not refused for the key (TopicDisallowed): the devices here registered
            // with the served app, so Apple's answer is that the token is not for this topic.
            return .failure(.init(.deviceTokenNotForTopic))
        }

        var pushType: APNsPushType?
        if let value = request.header(APNs.Header.pushType) {
            guard let known = APNsPushType(rawValue: value) else { return .failure(.init(.invalidPushType)) }
            pushType = known
        }

        var priority = APNsPriority.immediate.rawValue
        if let value = request.header(APNs.Header.priority) {
            guard let number = Int(value), APNsPriority(rawValue: number) != nil else { return .failure(.init(.badPriority)) }
            priority = number
        }

        var expiration: Int64?
        if let value = request.header(APNs.Header.expiration) {
            guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let seconds = Int64(value) else {
                return .failure(.init(.badExpirationDate))
            }
            expiration = seconds
        }

        let collapseID = request.header(APNs.Header.collapseID)
        if let collapseID, collapseID.utf8.count > APNs.maxCollapseIDBytes { return .failure(.init(.badCollapseId)) }

        if let id = request.header(APNs.Header.id), !APNs.isWellFormedID(id) { return .failure(.init(.badMessageId)) }

        guard !request.body.isEmpty else { return .failure(.init(.payloadEmpty)) }
        guard request.body.count <= APNs.maxPayloadBytes else { return .failure(.init(.payloadTooLarge)) }
        // Apple documents no reason for a payload that is not a JSON object. Such a payload holds no
        // notification dictionary at all, so it is answered as the nearest documented reason,
        // 400 PayloadEmpty ("the message payload is empty").
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)), object is [String: Any] else {
            return .failure(.init(.payloadEmpty))
        }

        return .success(
            CheckedNotification(
                topic: topic, pushType: pushType, priority: priority, expiration: expiration,
                collapseID: collapseID, payload: request.body))
    }

    /// Letters, digits, '.', '-' and '_': what a bundle ID and its topic suffixes are made of.
    static func isTopicByte(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
            || byte == 46 || byte == 45 || byte == 95
    }
}

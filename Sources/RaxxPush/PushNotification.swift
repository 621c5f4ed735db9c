import Foundation
import RaxxAPNs
import RaxxCore

/// One notification for one device, as Apple's provider API takes it.
public struct PushNotification: Sendable, Equatable {
    /// The device token, in hex.
    public var deviceToken: String
    /// `apns-topic`: the app's bundle id (with a suffix for some push types).
    public var topic: String
    public var pushType: APNsPushType
    public var priority: APNsPriority
    /// `apns-expiration`: seconds since 1970 until which APNs keeps trying (0: once, not stored).
    public var expiration: Int64?
    /// `apns-collapse-id`: notifications with the same one replace each other on the device.
    public var collapseID: String?
    /// `apns-id`: the notification's identity; a resend carries the same one. Made when nil.
    public var apnsID: String?
    /// The JSON payload (`{"aps":{…},…}`).
    public var payload: [UInt8]

    public init(
        deviceToken: String, topic: String, pushType: APNsPushType = .alert, priority: APNsPriority = .immediate,
        expiration: Int64? = nil, collapseID: String? = nil, apnsID: String? = nil, payload: [UInt8]
    ) {
        self.deviceToken = deviceToken
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }

    /// The token's last 8 characters: all a result or a log shows of it.
    public var tokenSuffix: String {
        // By its bytes when they are ASCII, as a token's hex is: by its Characters, this was 1 % of a push.
        let tail = deviceToken.utf8.suffix(8)
        return tail.allSatisfy { $0 < 0x80 } ? String(decoding: tail, as: UTF8.self) : String(deviceToken.suffix(8))
    }

    /// Why a notification is refused before anything is sent: the field and what is wrong.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var field: String
        public var message: String
        /// The reason APNs would answer (when there is one): what a result line reports.
        public var reason: APNsReason?

        public init(field: String, _ message: String, reason: APNsReason? = nil) {
            self.field = field
            self.message = message
            self.reason = reason
        }

        public var description: String { "\(field): \(message)" }
    }

    /// Checks what APNs checks, so that a notification it would refuse is never sent.
    /// `parsingPayload: false` skips parsing the payload as JSON, for a caller that made it from a
    /// JSON object (its size is checked all the same).
    public func check(parsingPayload: Bool = true) throws(Refusal) {
        guard APNs.isWellFormedDeviceToken(deviceToken) else {
            throw Refusal(field: "device_token", "must be the device's token in hex, 64 to 200 digits", reason: .badDeviceToken)
        }
        guard !topic.isEmpty, topic.utf8.count <= 255, topic.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw Refusal(field: "topic", "must be the app's bundle id (printable, no spaces)", reason: .badTopic)
        }
        if let expiration, expiration < 0 {
            throw Refusal(field: "expiration", "must be seconds since 1970, or 0", reason: .badExpirationDate)
        }
        if let collapseID {
            guard !collapseID.isEmpty, collapseID.utf8.count <= APNs.maxCollapseIDBytes,
                collapseID.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F })
            else {
                throw Refusal(
                    field: "collapse_id", "must be 1 to \(APNs.maxCollapseIDBytes) bytes, without control characters",
                    reason: .badCollapseId)
            }
        }
        if let apnsID, !APNs.isWellFormedID(apnsID) {
            throw Refusal(field: "apns_id", "must be a UUID (8-4-4-4-12 hex digits)", reason: .badMessageId)
        }
        guard !payload.isEmpty else { throw Refusal(field: "payload", "must not be empty", reason: .payloadEmpty) }
        guard payload.count <= APNs.maxPayloadBytes else {
            throw Refusal(field: "payload", "is \(payload.count) bytes; APNs takes at most \(APNs.maxPayloadBytes)", reason: .payloadTooLarge)
        }
        guard !parsingPayload || (try? JSONSerialization.jsonObject(with: Data(payload))) is [String: Any] else {
            throw Refusal(field: "payload", "must be a JSON object")
        }
    }

    /// The HTTP/2 request for this notification: `POST /3/device/<token>` at `baseURL`, signed with
    /// `providerToken` (a compact JWS), identified by `apnsID`.
    public func request(baseURL: String, providerToken: String, apnsID: String) -> HTTP2Request {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        var headers: [String] = []
        headers.reserveCapacity(7)
        headers.append(Self.line(APNs.Header.authorization, "bearer ", providerToken))
        headers.append(Self.line(APNs.Header.topic, "", topic))
        headers.append(Self.line(APNs.Header.pushType, "", pushType.rawValue))
        headers.append(Self.line(APNs.Header.priority, "", String(priority.rawValue)))
        if let expiration { headers.append(Self.line(APNs.Header.expiration, "", String(expiration))) }
        if let collapseID { headers.append(Self.line(APNs.Header.collapseID, "", collapseID)) }
        headers.append(Self.line(APNs.Header.id, "", apnsID))
        return HTTP2Request(url: Self.concatenated(base, APNs.pathPrefix, deviceToken), headers: headers, body: payload)
    }

    /// "name: prefixvalue", made in one allocation (a request's lines are made for every push).
    static func line(_ name: String, _ prefix: StaticString, _ value: String) -> String {
        var name = name, value = value
        return name.withUTF8 { name in
            value.withUTF8 { value in
                let prefix = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
                return String(unsafeUninitializedCapacity: name.count + 2 + prefix.count + value.count) { out in
                    var at = out.initialize(fromContentsOf: name)
                    at = out[at...].initialize(fromContentsOf: ": ".utf8)
                    at = out[at...].initialize(fromContentsOf: prefix)
                    return out[at...].initialize(fromContentsOf: value)
                }
            }
        }
    }

    /// `a + b + c`, made in one allocation.
    static func concatenated(_ a: String, _ b: String, _ c: String) -> String {
        var a = a, b = b, c = c
        return a.withUTF8 { a in
            b.withUTF8 { b in
                c.withUTF8 { c in
                    String(unsafeUninitializedCapacity: a.count + b.count + c.count) { out in
                        var at = out.initialize(fromContentsOf: a)
                        at = out[at...].initialize(fromContentsOf: b)
                        return out[at...].initialize(fromContentsOf: c)
                    }
                }
            }
        }
    }
}

/// What became of one notification.
public struct PushResult: Sendable, Equatable {
    public enum Status: String, Sendable, Codable {
        /// APNs took it (200).
        case delivered
        /// The token is no longer valid for the topic (410), since `timestamp`.
        case unregistered
        /// APNs refused it for good, or it kept failing for longer than the retry bound.
        case failed
        /// It never reached APNs: the endpoint could not be reached, or it was refused locally.
        case notSent = "not_sent"
        /// It was sent, and the run was stopped before its answer came: it may or may not have
        /// reached the device; sent again with the same apns_id, it is the same notification.
        case unknown
    }

    public var status: Status
    /// APNs's reason (or, for what never got an answer, why: `unreachable`, `timeout`, …).
    public var reason: String?
    /// The notification's `apns-id` (APNs's own answer when it gave one).
    public var apnsID: String?
    /// For `unregistered`: when APNs last knew the token valid (milliseconds since 1970).
    public var timestamp: Int64?
    /// How many times it was sent.
    public var attempts: Int
    /// A person's explanation, when there is more to say than the reason.
    public var detail: String?
    /// From the first try to the answer that settled it (nil when nothing was sent).
    public var latency: Duration?

    public init(
        status: Status, reason: String? = nil, apnsID: String? = nil, timestamp: Int64? = nil, attempts: Int = 0,
        detail: String? = nil, latency: Duration? = nil
    ) {
        self.latency = latency
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.timestamp = timestamp
        self.attempts = attempts
        self.detail = detail
    }
}

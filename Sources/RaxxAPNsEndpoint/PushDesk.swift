import Foundation
import RaxxAPNs
import RaxxCore

/// The endpoint's answer to one request.
public struct PushAnswer: Sendable, Equatable {
    public var status: Int
    /// `apns-id`: the request's, or one made here.
    public var apnsID: String
    /// `apns-unique-id` (200 only, as the development environment sends it).
    public var uniqueID: String?
    /// The refusal's reason; nil on 200.
    public var reason: APNsReason?
    /// 410's timestamp (ms).
    public var timestamp: Int64?

    /// The body: empty on 200, `{"reason":…}` (and `"timestamp"` on 410) otherwise.
    public var body: [UInt8] {
        guard let reason else { return [] }
        var text = "{\"reason\":\"\(reason.rawValue)\""
        if let timestamp { text += ",\"timestamp\":\(timestamp)" }
        return Array((text + "}").utf8)
    }
}

/// Decides every request as APNs would, plays the failure script, and logs what it decided.
/// Safe to call from any thread; a connection's own state travels in `ConnectionState`.
public final class PushDesk: Sendable {
    public let checks: PushChecks
    public let gate: ProviderTokenGate
    public let script: FailureScript
    public let log: PushLog?
    private let clock: @Sendable () -> Date

    public init(
        checks: PushChecks, gate: ProviderTokenGate, script: FailureScript = FailureScript(), log: PushLog? = nil,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.checks = checks
        self.gate = gate
        self.script = script
        self.log = log
        self.clock = clock
    }

    /// What one connection remembers: its number (for the log) and the key of its first push.
    public struct ConnectionState: Sendable {
        public var number: Int
        public var keyID: String?
        public init(number: Int) { self.number = number }
    }

    /// Answers one request on stream `stream` of `connection`.
    public func answer(_ request: PushRequest, connection: inout ConnectionState, stream: Int) -> PushAnswer {
        let nowMS = Int64((clock().timeIntervalSince1970 * 1000).rounded(.down))
        let apnsID = PushChecks.requestedID(request) ?? UUID.random().uuidString
        var entry = PushLogEntry(event: .refused, status: 0, apnsID: apnsID, connection: connection.number, stream: stream, time: nowMS)

        func refuse(_ reason: APNsReason, timestamp: Int64? = nil) -> PushAnswer {
            entry.status = reason.status
            entry.reason = reason
            entry.timestamp = timestamp
            log?.append(entry)
            return PushAnswer(status: reason.status, apnsID: apnsID, reason: reason, timestamp: timestamp)
        }

        let head: PushHead
        switch checks.head(request) {
        case .failure(let refusal): return refuse(refusal.reason)
        case .success(let value): head = value
        }
        entry.deviceToken = head.deviceToken
        entry.topic = request.header(APNs.Header.topic)

        let admission: ProviderTokenGate.Admission
        switch gate.admit(head.bearer, now: nowMS / 1000, connectionKeyID: connection.keyID) {
        case .failure(let refusal): return refuse(refusal.reason)
        case .success(let value): admission = value
        }
        if connection.keyID == nil { connection.keyID = admission.keyID }
        entry.keyID = admission.keyID
        entry.issuedAt = admission.issuedAt

        let notification: CheckedNotification
        switch checks.notification(request, deviceToken: head.deviceToken) {
        case .failure(let refusal): return refuse(refusal.reason)
        case .success(let value): notification = value
        }
        if let timestamp = script.unregisteredTimestamp(head.deviceToken, now: nowMS) {
            return refuse(.unregistered, timestamp: timestamp)
        }
        if let failure = script.roll() { return refuse(failure) }

        gate.noteAccepted(admission)
        let uniqueID = UUID.random().uuidString.lowercased()
        if let log {
            entry.event = .accepted
            entry.status = 200
            entry.uniqueID = uniqueID
            entry.topic = notification.topic
            entry.pushType = notification.pushType?.rawValue
            entry.priority = notification.priority
            entry.expiration = notification.expiration
            entry.collapseID = notification.collapseID
            entry.payload = notification.payload
            log.append(entry)
        }
        return PushAnswer(status: 200, apnsID: apnsID, uniqueID: uniqueID)
    }
}

import Foundation
import RaxxAPI
import RaxxCore
import RaxxPush

/// The dispatcher's way to APNs in `raxx-sandbox serve --apns-url …`: RaxxPush's client (HTTP/2
/// over libcurl, provider tokens shared through the state folder), each event rendered by
/// `EventPayload` — the same rendering `raxx-notify push` gives an `event` line. Pushes are sent
/// concurrently, up to `window` at a time; the client multiplexes them over its connections.
public struct APNsEventSender: EventPushSending {
    public let client: any PushSending
    public let topic: String
    public let window: Int

    public init(client: any PushSending, topic: String, window: Int = 100) {
        self.client = client
        self.topic = topic
        self.window = max(window, 1)
    }

    public func deliver(_ pushes: [OutgoingPush]) async -> [PushVerdict] {
        var verdicts = [PushVerdict?](repeating: nil, count: pushes.count)
        await withTaskGroup(of: (Int, PushVerdict).self) { group in
            var next = 0
            func start() {
                guard next < pushes.count else { return }
                let index = next, push = pushes[index]
                next += 1
                group.addTask {
                    // Alerts are worth an hour; after that APNs may drop them.
                    let notification = PushNotification(
                        deviceToken: push.token, topic: topic, pushType: .alert, priority: .immediate,
                        expiration: Int64(push.event.createdAt.timeIntervalSince1970) + 3600,
                        collapseID: nil, apnsID: push.apnsID, payload: EventPayload.render(push.event))
                    return (index, Self.verdict(await client.send(notification)))
                }
            }
            for _ in 0..<min(window, pushes.count) { start() }
            for await (index, verdict) in group {
                verdicts[index] = verdict
                start()
            }
        }
        return verdicts.map { $0 ?? .failed(reason: "not_sent") }
    }

    static func verdict(_ result: PushResult) -> PushVerdict {
        switch result.status {
        case .delivered: .delivered
        case .unregistered: .unregistered(result.timestamp.map { Date(timeIntervalSince1970: Double($0) / 1000) })
        case .failed, .notSent, .unknown: .failed(reason: result.reason ?? result.status.rawValue)
        }
    }
}

extension APNsEventSender {
    /// A sender to the APNs endpoint at `url`, signing with the .p8 key at `keyFile` (0600, or
    /// refused); provider tokens are shared with other dispatchers through `stateDirectory`.
    public static func open(
        url: String, keyFile: String, keyID: String, teamID: String, topic: String, caFile: String?,
        stateDirectory: URL
    ) async throws(RaxxError) -> APNsEventSender {
        let settings = PushSettings(endpoint: url, keyFile: keyFile, keyID: keyID, teamID: teamID, caFile: caFile)
        let client = try await PushClient.open(settings, stateDirectory: stateDirectory)
        return APNsEventSender(client: client, topic: topic, window: settings.maxInFlight)
    }
}

import Crypto
import Foundation
import Logging
import RaxxAPI
import RaxxCore
import ServiceLifecycle

/// One notification for the dispatcher to deliver.
public struct OutgoingPush: Sendable, Equatable {
    public var deviceID: String
    public var token: String
    /// The same for every attempt at the same (event, device): a resend is recognisably the same
    /// notification, in APNs's answers and in the local endpoint's log.
    public var apnsID: String
    public var event: Components.Schemas.Event
}

/// What became of an `OutgoingPush`.
public enum PushVerdict: Sendable, Equatable {
    case delivered
    /// APNs says the token is not valid since this time (now, when it gave none).
    case unregistered(Date?)
    /// Refused for good, or not delivered within the retry bound.
    case failed(reason: String)
}

/// How the dispatcher reaches APNs: RaxxPush's HTTP/2 client in `raxx-sandbox serve`, a
/// recording fake in tests. Answers one verdict per push, in order.
public protocol EventPushSending: Sendable {
    func deliver(_ pushes: [OutgoingPush]) async -> [PushVerdict]
}

/// A background service of the sandbox, as Raptor dispatches: every new event goes to its
/// account's active devices that opted into its type (and were registered before it), never
/// blocking the request that made the event. It wakes when any event commits (and every
/// `idleInterval` regardless), sends a batch, acts on the answers (an unregistered token revokes
/// its device if it was registered before APNs's timestamp), then moves its cursor past the
/// batch: a restart resends at most the batch in flight, under the same apns-ids.
struct PushDispatcher: Service {
    let store: PushDispatchStore
    let notifier: EventNotifier
    let sender: any EventPushSending
    let clock: @Sendable () -> Date
    let logger: Logger
    var batch = 256
    var idleInterval: Duration = .seconds(30)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var cursor: Int64?
            while !Task.isCancelled {
                let mark = notifier.mark(EventNotifier.everyone)
                do {
                    if cursor == nil { cursor = try await store.start() }
                    if let next = try await dispatch(after: cursor ?? 0) {
                        cursor = next
                        continue  // there may be more
                    }
                } catch {
                    logger.error("push dispatch failed", metadata: ["error_type": "\(String(reflecting: type(of: error)))"])
                    try? await Task.sleep(for: .seconds(1))
                }
                _ = await notifier.wait(for: EventNotifier.everyone, after: mark, timeout: idleInterval)
            }
        }
    }

    /// Dispatches the next batch after `cursor`; answers the new cursor, or nil when there was
    /// nothing to do.
    func dispatch(after cursor: Int64) async throws -> Int64? {
        let pending = try await store.pending(after: cursor, limit: batch)
        guard let last = pending.last?.seq else { return nil }
        let pushes = pending.flatMap { p -> [OutgoingPush] in
            switch p.content {
            case .push(let event, let targets):
                return targets.map {
                    OutgoingPush(
                        deviceID: $0.deviceID, token: $0.token, apnsID: Self.apnsID(seq: event.seq, device: $0.deviceID), event: event)
                }
            case .unreadable(let reason):
                logger.error("event not pushed", metadata: ["seq": "\(p.seq)", "reason": "\(reason)"])
                return []
            }
        }
        if !pushes.isEmpty {
            let verdicts = await sender.deliver(pushes)
            for (push, verdict) in zip(pushes, verdicts) {
                switch verdict {
                case .delivered:
                    break
                case .unregistered(let at):
                    let revoked = try await store.revokeUnregistered(deviceID: push.deviceID, unregisteredAt: at ?? clock(), now: clock())
                    logger.info("device unregistered", metadata: ["device_id": "\(push.deviceID)", "revoked": "\(revoked)"])
                case .failed(let reason):
                    logger.warning("push failed", metadata: ["device_id": "\(push.deviceID)", "reason": "\(reason)"])
                }
            }
        }
        try await store.advance(to: last)
        return last
    }

    /// A UUID made from the event and the device (SHA-256, shaped as a version-8 UUID).
    static func apnsID(seq: Int64, device: String) -> String {
        var bytes = Array(SHA256.hash(data: Data("raxx-push:\(seq):\(device)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = ASCIIHex.lowercase(bytes)
        let p = Array(hex)
        return [p[0..<8], p[8..<12], p[12..<16], p[16..<20], p[20..<32]].map { String($0) }.joined(separator: "-").uppercased()
    }
}

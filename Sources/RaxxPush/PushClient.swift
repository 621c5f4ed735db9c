import Foundation
import RaxxAPNs
import RaxxClient
import RaxxCore
import Synchronization

/// Where streams go: the HTTP/2 engine, or a test's scripted endpoint.
public protocol HTTP2Transport: Sendable {
    func perform(_ request: HTTP2Request) async -> HTTP2Outcome
    func shutdown() async
}

extension HTTP2Engine: HTTP2Transport {}

/// Sends notifications to one APNs endpoint and settles each one: delivered, unregistered, failed
/// for good, or not sent. Safe to call from many tasks at once (an async server's dispatcher, or
/// a pipe's window of in-flight lines); each `send` suspends until its notification is settled.
///
/// - 429, 500, 503, GOAWAY, reset or unanswered streams are sent again after a jittered,
///   doubling pause, as long as the next try starts within `retryFor` of the first; every resend
///   carries the same `apns-id` (one is made when the notification has none).
/// - With `failFast` (a command a person or a script waits on), an endpoint that cannot be
///   reached (refused, no route) before it ever answered leaves the notification not sent at
///   once: offline, network work fails fast. Once it has answered, or without `failFast` (a
///   server's dispatcher), a refused connection (a restart, say) is retried like a lost one.
/// - ExpiredProviderToken: a new token is minted once (or taken from another process) and the
///   notification resent once.
/// - Permanent reasons fail at once; 410 answers unregistered with APNs's timestamp.
/// - What APNs would refuse is refused here without sending (`PushNotification.check`), except a
///   payload that is not JSON: the caller makes payloads (and may check them fully first).
public final class PushClient: Sendable {
    public struct Options: Sendable {
        /// The endpoint's base URL (`https://api.push.apple.com`).
        public var endpoint: String
        /// How long after its first try a notification may still be tried again.
        public var retryFor: RaxxDuration
        /// The first pause before a retry (it doubles, with jitter, up to `maxBackoff`).
        public var firstBackoff: RaxxDuration
        public var maxBackoff: RaxxDuration
        /// Whether an endpoint never reached yet is given up on at once (see the type's notes).
        public var failFast: Bool

        public init(endpoint: String, retryFor: RaxxDuration = .seconds(60), firstBackoff: RaxxDuration = RaxxDuration(milliseconds: 200),
                    maxBackoff: RaxxDuration = .seconds(5), failFast: Bool = false) {
            self.endpoint = endpoint
            self.retryFor = retryFor
            self.firstBackoff = firstBackoff
            self.maxBackoff = maxBackoff
            self.failFast = failFast
        }
    }

    public let options: Options
    public let tokens: ProviderTokens
    private let transport: any HTTP2Transport
    private let newID: @Sendable () -> String
    private let sleep: @Sendable (Duration) async throws -> Void
    private let monotonic: @Sendable () -> Duration
    private let jitter: @Sendable () -> Double
    /// Whether the endpoint has answered anything yet.
    private let reached = Atomic<Bool>(false)

    public init(options: Options, tokens: ProviderTokens, transport: any HTTP2Transport,
                newID: @escaping @Sendable () -> String = { UUID.random().uuidString },
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
                monotonic: @escaping @Sendable () -> Duration = { ContinuousClock.now - PushClient.epoch },
                jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }) {
        self.options = options
        self.tokens = tokens
        self.transport = transport
        self.newID = newID
        self.sleep = sleep
        self.monotonic = monotonic
        self.jitter = jitter
    }

    public static let epoch = ContinuousClock.now

    /// Sends `notification` until it is settled.
    public func send(_ notification: PushNotification) async -> PushResult {
        let start = monotonic()
        var result = await settle(notification, start: start)
        if result.attempts > 0 { result.latency = monotonic() - start }
        return result
    }

    private func settle(_ notification: PushNotification, start: Duration) async -> PushResult {
        do {
            try notification.check(parsingPayload: false)
        } catch {
            return PushResult(status: .notSent, reason: error.reason?.rawValue ?? "Refused", apnsID: notification.apnsID,
                              detail: error.description)
        }
        let apnsID = notification.apnsID ?? newID().uppercased()
        let deadline = start + .milliseconds(options.retryFor.milliseconds)
        var attempts = 0
        var refreshedToken = false
        var lastReason = "unknown"
        var lastDetail: String? = nil
        // An earlier try went out and got no answer (a reset, a timeout): it may have been
        // delivered, so this notification is never said to be not sent, and never given up at once.
        var mayHaveBeenSent = false
        var notSentUnlessSent: PushResult.Status { mayHaveBeenSent ? .failed : .notSent }

        while true {
            let token: KeptToken
            do {
                token = try await tokens.current()
            } catch {
                return PushResult(status: .notSent, reason: "ProviderToken", apnsID: apnsID, attempts: attempts, detail: error.message)
            }
            attempts += 1
            let request = notification.request(baseURL: options.endpoint, providerToken: token.token, apnsID: apnsID)
            let outcome = await transport.perform(request)
            var unreachable = false
            switch outcome {
            case .answer(let answer):
                reached.store(true, ordering: .relaxed)
                let body = answer.status == 200 || answer.body.isEmpty ? nil
                    : try? JSONDecoder().decode(APNsErrorBody.self, from: Data(answer.body))
                let id = answer.headers[APNs.Header.id] ?? apnsID
                switch APNsReason.disposition(status: answer.status, reason: body?.reason) {
                case .delivered:
                    return PushResult(status: .delivered, apnsID: id, attempts: attempts)
                case .unregistered:
                    return PushResult(status: .unregistered, reason: body?.reason ?? "Unregistered", apnsID: id,
                                      timestamp: body?.timestamp, attempts: attempts)
                case .permanent:
                    return PushResult(status: .failed, reason: body?.reason ?? "HTTP \(answer.status)", apnsID: id, attempts: attempts)
                case .refreshProviderToken:
                    let reason = body?.reason ?? APNsReason.expiredProviderToken.rawValue
                    guard !refreshedToken else {
                        return PushResult(status: .failed, reason: reason, apnsID: id, attempts: attempts,
                                          detail: "APNs refused a freshly minted provider token too; check the key id, team id and this machine's clock")
                    }
                    refreshedToken = true
                    do {
                        guard try await tokens.refresh(replacing: token) != nil else {
                            return PushResult(status: .failed, reason: reason, apnsID: id, attempts: attempts,
                                              detail: "the token was minted less than 20 minutes ago after another expiry; check this machine's clock")
                        }
                    } catch {
                        return PushResult(status: .failed, reason: reason, apnsID: id, attempts: attempts, detail: error.message)
                    }
                    continue
                case .retryable:
                    lastReason = body?.reason ?? "HTTP \(answer.status)"
                    lastDetail = nil
                }
            case .failure(let failure):
                lastDetail = failure.detail
                switch failure.kind {
                case .offlineHard:
                    lastReason = "Unreachable"
                    lastDetail = mayHaveBeenSent ? "The endpoint could not be reached again; an earlier try went unanswered and may have been delivered."
                                                 : "The endpoint could not be reached; nothing was sent."
                    unreachable = true
                    guard !options.failFast || mayHaveBeenSent || reached.load(ordering: .relaxed) else {
                        return PushResult(status: .notSent, reason: lastReason, apnsID: apnsID, attempts: attempts, detail: lastDetail)
                    }
                case .tls, .policy:
                    // The endpoint is not one we may talk to: trying again will not change that.
                    return PushResult(status: notSentUnlessSent, reason: failure.kind == TransportFailure.Kind.tls ? "TLS" : "NotHTTP2", apnsID: apnsID,
                                      attempts: attempts, detail: failure.detail)
                case .cancelled:
                    return PushResult(status: notSentUnlessSent, reason: "Cancelled", apnsID: apnsID, attempts: attempts, detail: failure.detail)
                case .offlineSoft, .other:
                    lastReason = failure.curlCode == 28 ? "Timeout" : "ConnectionLost"
                    mayHaveBeenSent = true
                }
            }
            // Retry after a pause, if the next try still starts within the bound.
            let ceiling = min(options.maxBackoff.milliseconds,
                              options.firstBackoff.milliseconds << Int64(min(attempts - 1, 20)))
            let pause = Duration.milliseconds(Int64(Double(ceiling) * (0.5 + 0.5 * jitter())))
            guard monotonic() + pause <= deadline else {
                return PushResult(status: unreachable ? notSentUnlessSent : .failed, reason: lastReason, apnsID: apnsID, attempts: attempts,
                                  detail: lastDetail)
            }
            do {
                try await sleep(pause)
            } catch {
                return PushResult(status: unreachable ? notSentUnlessSent : .failed, reason: lastReason, apnsID: apnsID, attempts: attempts,
                                  detail: "cancelled while waiting to retry")
            }
        }
    }

    /// Lets what is in flight finish and closes the connections.
    public func shutdown() async {
        await transport.shutdown()
    }
}

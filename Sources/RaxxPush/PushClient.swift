import Foundation
import RaxxAPNs
import RaxxClient
import RaxxCore
import Synchronization

/// Where streams go: the HTTP/2 engine, or a test's scripted endpoint.
public protocol HTTP2Transport: Sendable {
    func perform(_ request: HTTP2Request) async -> HTTP2Outcome
    /// Sends `request`; `completion` runs once with its outcome, on whichever thread has it.
    func submit(_ request: HTTP2Request, completion: @escaping @Sendable (HTTP2Outcome) -> Void)
    func shutdown() async
}

extension HTTP2Transport {
    public func submit(_ request: HTTP2Request, completion: @escaping @Sendable (HTTP2Outcome) -> Void) {
        Task { completion(await perform(request)) }
    }
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

        public init(
            endpoint: String, retryFor: RaxxDuration = .seconds(60), firstBackoff: RaxxDuration = RaxxDuration(milliseconds: 200),
            maxBackoff: RaxxDuration = .seconds(5), failFast: Bool = false
        ) {
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

    public init(
        options: Options, tokens: ProviderTokens, transport: any HTTP2Transport,
        newID: @escaping @Sendable () -> String = { UUID.random().uuidString },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        monotonic: @escaping @Sendable () -> Duration = { ContinuousClock.now - PushClient.epoch },
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
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
        var result: PushResult
        switch begin(notification, start: start) {
        case .refused(let refusal): return refusal
        case .trying(var trying): result = await carryOn(&trying, from: nil)
        }
        if result.attempts > 0 { result.latency = monotonic() - start }
        return result
    }

    /// Sends `notification` and calls `completion` once with its result. The usual notification
    /// (a provider token at hand, settled by its first answer) is sent and settled with no task:
    /// `completion` runs on the transport's thread as the answer is read. Anything else (a retry,
    /// a token to mint or refresh) carries on as `send` does, in a task of its own.
    public func send(_ notification: PushNotification, completion: @escaping @Sendable (PushResult) -> Void) {
        let start = monotonic()
        var trying: Trying
        switch begin(notification, start: start) {
        case .refused(let refusal):
            // Never before this returns: a caller may send its next notification from the completion.
            Task { completion(refusal) }
            return
        case .trying(let begun):
            trying = begun
        }
        guard let token = tokens.usableNow() else {
            Task { [trying] in
                var trying = trying
                var result = await carryOn(&trying, from: nil)
                if result.attempts > 0 { result.latency = monotonic() - start }
                completion(result)
            }
            return
        }
        trying.token = token
        trying.attempts = 1
        transport.submit(notification.request(baseURL: options.endpoint, providerToken: token.token, apnsID: trying.apnsID)) {
            [self, trying] outcome in
            var trying = trying
            let step = judge(outcome, &trying)
            if case .settled(var result) = step {
                result.latency = monotonic() - start
                completion(result)
                return
            }
            Task { [trying] in
                var trying = trying
                var result = await carryOn(&trying, from: step)
                result.latency = monotonic() - start
                completion(result)
            }
        }
    }

    /// What is known of one notification's tries so far.
    private struct Trying: Sendable {
        let notification: PushNotification
        let apnsID: String
        /// When its last try must have started by.
        let deadline: Duration
        /// The provider token of the last try.
        var token: KeptToken?
        var attempts = 0
        var refreshedToken = false
        var lastReason = "unknown"
        var lastDetail: String? = nil
        /// An earlier try went out and got no answer (a reset, a timeout): it may have been
        /// delivered, so this notification is never said to be not sent, and never given up at once.
        var mayHaveBeenSent = false
        /// The last try found the endpoint unreachable.
        var unreachable = false

        var notSentUnlessSent: PushResult.Status { mayHaveBeenSent ? .failed : .notSent }

        func result(
            _ status: PushResult.Status, reason: String?, apnsID: String? = nil, timestamp: Int64? = nil,
            detail: String? = nil
        ) -> PushResult {
            PushResult(status: status, reason: reason, apnsID: apnsID ?? self.apnsID, timestamp: timestamp, attempts: attempts, detail: detail)
        }
    }

    private enum Beginning {
        case refused(PushResult)
        case trying(Trying)
    }

    /// A notification APNs would refuse is settled here, unsent; any other gets its apns-id and deadline.
    private func begin(_ notification: PushNotification, start: Duration) -> Beginning {
        do {
            try notification.check(parsingPayload: false)
        } catch {
            return .refused(
                PushResult(
                    status: .notSent, reason: error.reason?.rawValue ?? "Refused", apnsID: notification.apnsID,
                    detail: error.description))
        }
        return .trying(
            Trying(
                notification: notification, apnsID: notification.apnsID ?? newID().uppercased(),
                deadline: start + .milliseconds(options.retryFor.milliseconds)))
    }

    /// What one try's outcome comes to.
    private enum Step: Sendable {
        case settled(PushResult)
        /// APNs refused the token as expired (the first time): resend with a fresh one.
        case refreshToken(reason: String, apnsID: String)
        /// Worth another try, if it can start within the deadline.
        case retry
    }

    private func judge(_ outcome: HTTP2Outcome, _ trying: inout Trying) -> Step {
        trying.unreachable = false
        switch outcome {
        case .answer(let answer):
            reached.store(true, ordering: .relaxed)
            let body =
                answer.status == 200 || answer.body.isEmpty
                ? nil
                : try? JSONDecoder().decode(APNsErrorBody.self, from: Data(answer.body))
            let id = answer.headers[APNs.Header.id] ?? trying.apnsID
            switch APNsReason.disposition(status: answer.status, reason: body?.reason) {
            case .delivered:
                return .settled(trying.result(.delivered, reason: nil, apnsID: id))
            case .unregistered:
                return .settled(trying.result(.unregistered, reason: body?.reason ?? "Unregistered", apnsID: id, timestamp: body?.timestamp))
            case .permanent:
                return .settled(trying.result(.failed, reason: body?.reason ?? "HTTP \(answer.status)", apnsID: id))
            case .refreshProviderToken:
                let reason = body?.reason ?? APNsReason.expiredProviderToken.rawValue
                guard !trying.refreshedToken else {
                    return .settled(
                        trying.result(
                            .failed, reason: reason, apnsID: id,
                            detail: "APNs refused a freshly minted provider token too; check the key id, team id and this machine's clock"))
                }
                return .refreshToken(reason: reason, apnsID: id)
            case .retryable:
                trying.lastReason = body?.reason ?? "HTTP \(answer.status)"
                trying.lastDetail = nil
                return .retry
            }
        case .failure(let failure):
            trying.lastDetail = failure.detail
            switch failure.kind {
            case .offlineHard:
                trying.lastReason = "Unreachable"
                trying.lastDetail =
                    trying.mayHaveBeenSent
                    ? "The endpoint could not be reached again; an earlier try went unanswered and may have been delivered."
                    : "The endpoint could not be reached; nothing was sent."
                trying.unreachable = true
                guard !options.failFast || trying.mayHaveBeenSent || reached.load(ordering: .relaxed) else {
                    return .settled(trying.result(.notSent, reason: trying.lastReason, detail: trying.lastDetail))
                }
                return .retry
            case .tls, .policy:
                // The endpoint is not one we may talk to: trying again will not change that.
                return .settled(
                    trying.result(
                        trying.notSentUnlessSent, reason: failure.kind == TransportFailure.Kind.tls ? "TLS" : "NotHTTP2",
                        detail: failure.detail))
            case .cancelled:
                return .settled(trying.result(trying.notSentUnlessSent, reason: "Cancelled", detail: failure.detail))
            case .offlineSoft, .other, .tooLarge:
                trying.lastReason = failure.curlCode == 28 ? "Timeout" : "ConnectionLost"
                trying.mayHaveBeenSent = true
                return .retry
            }
        }
    }

    /// Tries until settled, starting from `step` when a first try was already judged.
    private func carryOn(_ trying: inout Trying, from step: Step?) async -> PushResult {
        var next = step
        while true {
            let step: Step
            if let known = next {
                step = known
                next = nil
            } else {
                let token: KeptToken
                do {
                    token = try await tokens.current()
                } catch {
                    return trying.result(.notSent, reason: "ProviderToken", detail: error.message)
                }
                trying.token = token
                trying.attempts += 1
                step = judge(
                    await transport.perform(
                        trying.notification.request(
                            baseURL: options.endpoint, providerToken: token.token,
                            apnsID: trying.apnsID)),
                    &trying)
            }
            switch step {
            case .settled(let result):
                return result
            case .refreshToken(let reason, let id):
                trying.refreshedToken = true
                guard let stale = trying.token else { continue }
                do {
                    guard try await tokens.refresh(replacing: stale) != nil else {
                        return trying.result(
                            .failed, reason: reason, apnsID: id,
                            detail: "the token was minted less than 20 minutes ago after another expiry; check this machine's clock")
                    }
                } catch {
                    return trying.result(.failed, reason: reason, apnsID: id, detail: error.message)
                }
            case .retry:
                // Retry after a pause, if the next try still starts within the bound.
                let ceiling = min(
                    options.maxBackoff.milliseconds,
                    options.firstBackoff.milliseconds << Int64(min(trying.attempts - 1, 20)))
                let pause = Duration.milliseconds(Int64(Double(ceiling) * (0.5 + 0.5 * jitter())))
                let status = trying.unreachable ? trying.notSentUnlessSent : .failed
                guard monotonic() + pause <= trying.deadline else {
                    return trying.result(status, reason: trying.lastReason, detail: trying.lastDetail)
                }
                do {
                    try await sleep(pause)
                } catch {
                    return trying.result(status, reason: trying.lastReason, detail: "cancelled while waiting to retry")
                }
            }
        }
    }

    /// Lets what is in flight finish and closes the connections.
    public func shutdown() async {
        await transport.shutdown()
    }
}

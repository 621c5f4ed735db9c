import Crypto
import Foundation
import RaxxAPNs
import RaxxClient
import RaxxCore
import RaxxPush
import RaxxTestSupport
import Testing

/// How answers settle a notification, over a scripted endpoint: which are retried, with which
/// apns-id, and when the provider token is replaced. (The real endpoint is end to end.)
@Suite struct PushClientTests {
    /// Answers streams in order from a script, and keeps what was sent.
    final class ScriptedEndpoint: HTTP2Transport, @unchecked Sendable {
        private let lock = NSLock()
        private var script: [HTTP2Outcome]
        private(set) var requests: [HTTP2Request] = []

        init(_ script: [HTTP2Outcome]) { self.script = script }

        func perform(_ request: HTTP2Request) async -> HTTP2Outcome {
            lock.withLock {
                requests.append(request)
                return script.isEmpty ? .answer(HTTP2Answer(status: 200)) : script.removeFirst()
            }
        }

        func shutdown() async {}

        var sent: [HTTP2Request] { lock.withLock { requests } }
    }

    static func error(_ status: Int, _ reason: APNsReason, timestamp: Int64? = nil) -> HTTP2Outcome {
        .answer(HTTP2Answer(status: status, body: Array(try! JSONEncoder().encode(APNsErrorBody(reason: reason.rawValue, timestamp: timestamp)))))
    }

    /// A client whose pauses advance a test clock instead of waiting.
    static func client(_ endpoint: ScriptedEndpoint, retryFor: RaxxDuration = .seconds(30), failFast: Bool = false) -> (PushClient, TestClock) {
        let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
        let tokens = ProviderTokens(key: P256.Signing.PrivateKey(), keyID: "KEY1234567", teamID: "TEAM123456", sharing: nil, clock: clock.closure)
        let client = PushClient(
            options: .init(endpoint: "https://127.0.0.1:1", retryFor: retryFor, failFast: failFast), tokens: tokens, transport: endpoint,
            newID: { "6b2c9e0a-3c57-4e73-9e2a-0e8e3e4b7c11" },
            sleep: { clock.advance(by: Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) },
            monotonic: { .milliseconds(Int64(clock.now.timeIntervalSince1970 * 1000)) },
            jitter: { 0.5 })
        return (client, clock)
    }

    /// The two ways a notification is sent: awaited (a server's dispatcher), or with a completion
    /// (a pipe), whose first try takes no task when a provider token is at hand.
    enum Way: CaseIterable, Sendable {
        case awaited, completion
    }

    static let notification = PushNotification(
        deviceToken: String(repeating: "ab", count: 32), topic: "app.raxx.ios",
        payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8))

    static func header(_ name: String, of request: HTTP2Request) -> String? {
        request.headers.first { $0.hasPrefix(name + ": ") }.map { String($0.dropFirst(name.count + 2)) }
    }

    @Test(arguments: Way.allCases) func retriesThrottlingAndOutagesWithTheSameApnsID(way: Way) async {
        let endpoint = ScriptedEndpoint([
            Self.error(429, .tooManyRequests), Self.error(503, .serviceUnavailable),
            Self.error(500, .internalServerError),
            .failure(TransportFailure(kind: .offlineSoft, curlCode: 92, detail: "stream refused (GOAWAY)")),
        ])
        let (client, _) = Self.client(endpoint)
        let result = await client.send(Self.notification, way)
        #expect(result.status == .delivered && result.attempts == 5)
        #expect(Set(endpoint.sent.map { Self.header("apns-id", of: $0) }) == ["6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11"])
    }

    @Test(arguments: Way.allCases) func givesUpWhenTheNextTryWouldStartAfterRetryFor(way: Way) async {
        let endpoint = ScriptedEndpoint(Array(repeating: Self.error(429, .tooManyRequests), count: 100))
        let (client, clock) = Self.client(endpoint, retryFor: .seconds(10))
        let start = clock.now
        let result = await client.send(Self.notification, way)
        #expect(result.status == .failed && result.reason == "TooManyRequests")
        #expect(clock.now.timeIntervalSince(start) <= 10)
        #expect(endpoint.sent.count > 3 && endpoint.sent.count < 20)
    }

    @Test(arguments: Way.allCases) func permanentReasonsAreNeverRetried(way: Way) async {
        for reason in [APNsReason.badDeviceToken, .deviceTokenNotForTopic, .payloadTooLarge, .topicDisallowed, .invalidProviderToken] {
            let endpoint = ScriptedEndpoint([Self.error(reason.status, reason)])
            let result = await Self.client(endpoint).0.send(Self.notification, way)
            #expect(result.status == .failed && result.reason == reason.rawValue && result.attempts == 1)
            #expect(endpoint.sent.count == 1)
        }
    }

    @Test(arguments: Way.allCases) func unregisteredCarriesApnsTimestamp(way: Way) async {
        let endpoint = ScriptedEndpoint([Self.error(410, .unregistered, timestamp: 1_699_999_000_123)])
        let result = await Self.client(endpoint).0.send(Self.notification, way)
        #expect(
            result
                == PushResult(
                    status: .unregistered, reason: "Unregistered", apnsID: "6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11",
                    timestamp: 1_699_999_000_123, attempts: 1, latency: .zero))
    }

    @Test(arguments: Way.allCases) func anExpiredProviderTokenIsReplacedOnceAndTheNotificationResent(way: Way) async throws {
        let endpoint = ScriptedEndpoint([Self.error(403, .expiredProviderToken)])
        let (client, clock) = Self.client(endpoint)
        _ = try await client.tokens.current()
        clock.advance(by: 25 * 60)
        let result = await client.send(Self.notification, way)
        #expect(result.status == .delivered && result.attempts == 2)
        let bearers = endpoint.sent.map { Self.header("authorization", of: $0) }
        #expect(bearers.count == 2 && bearers[0] != bearers[1])
        #expect(await client.tokens.minted == 2)
    }

    @Test(arguments: Way.allCases) func aSecondExpiryFailsInsteadOfMintingAgain(way: Way) async {
        let endpoint = ScriptedEndpoint([Self.error(403, .expiredProviderToken), Self.error(403, .expiredProviderToken)])
        let (client, _) = Self.client(endpoint)
        let result = await client.send(Self.notification, way)
        #expect(result.status == .failed && result.reason == "ExpiredProviderToken" && result.attempts == 2)
        #expect(await client.tokens.minted == 2)
    }

    @Test(arguments: Way.allCases) func anUnreachableEndpointLeavesItNotSentAtOnceWhenFailingFast(way: Way) async {
        let refused = HTTP2Outcome.failure(TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused"))
        let endpoint = ScriptedEndpoint(Array(repeating: refused, count: 100))
        let result = await Self.client(endpoint, failFast: true).0.send(Self.notification, way)
        #expect(result.status == .notSent && result.reason == "Unreachable")
        // Offline, a command fails fast: one try, not a minute of them.
        #expect(result.attempts == 1 && endpoint.sent.count == 1)
        #expect(result.detail == "The endpoint could not be reached; nothing was sent.")
        // A server's dispatcher keeps trying, within the bound.
        let patient = ScriptedEndpoint(Array(repeating: refused, count: 100))
        let kept = await Self.client(patient, retryFor: .seconds(2)).0.send(Self.notification, way)
        #expect(kept.status == .notSent && kept.reason == "Unreachable" && kept.attempts > 1)
    }

    /// A try that went out unanswered (a reset) may have been delivered: a refusal after it is
    /// tried again within the bound, and in the end the push is failed, never "not sent".
    @Test(arguments: Way.allCases) func aRefusalAfterAnUnansweredTryIsNeverNotSent(way: Way) async {
        let reset = HTTP2Outcome.failure(TransportFailure(kind: .other, curlCode: 92, detail: "stream reset"))
        let refused = HTTP2Outcome.failure(TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused"))
        let endpoint = ScriptedEndpoint([reset] + Array(repeating: refused, count: 100))
        let result = await Self.client(endpoint, retryFor: .seconds(2), failFast: true).0.send(Self.notification, way)
        #expect(result.status == .failed && result.reason == "Unreachable" && result.attempts > 2)
        #expect(result.detail?.contains("may have been delivered") == true)
        // Every try carried the same apns-id, so APNs can tell a resend from a new push.
        let ids = endpoint.sent.compactMap { $0.headers.first { $0.lowercased().hasPrefix("apns-id:") } }
        #expect(ids.count == endpoint.sent.count && Set(ids).count == 1)
    }

    @Test(arguments: Way.allCases) func anEndpointThatAnsweredBeforeIsTriedAgainWhenItRefuses(way: Way) async {
        let refused = HTTP2Outcome.failure(TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused"))
        let endpoint = ScriptedEndpoint([.answer(HTTP2Answer(status: 200)), refused, refused])
        let (client, _) = Self.client(endpoint, failFast: true)
        #expect(await client.send(Self.notification, way).status == .delivered)
        // A restart: refused twice, then answered.
        let result = await client.send(Self.notification, way)
        #expect(result.status == .delivered && result.attempts == 3)
    }

    @Test(arguments: Way.allCases) func aLocallyRefusedNotificationIsNeverSent(way: Way) async {
        var oversized = Self.notification
        oversized.payload = Array(("{\"a\":\"" + String(repeating: "x", count: 4096) + "\"}").utf8)
        let endpoint = ScriptedEndpoint([])
        let result = await Self.client(endpoint).0.send(oversized, way)
        #expect(result.status == .notSent && result.reason == "PayloadTooLarge")
        #expect(endpoint.sent.isEmpty)
    }
}

extension PushClient {
    func send(_ notification: PushNotification, _ way: PushClientTests.Way) async -> PushResult {
        switch way {
        case .awaited:
            return await send(notification)
        case .completion:
            _ = try? await tokens.current()
            return await withCheckedContinuation { continuation in
                send(notification) { continuation.resume(returning: $0) }
            }
        }
    }
}

import Foundation
import RaxxAPNs
import RaxxCLI
import RaxxCore
import RaxxNotifyCommand
import RaxxPush
import RaxxTestSupport
import Testing

/// `raxx-notify push` in-process: lines in, results out, exit statuses — over a push world the
/// test plans (what each device's notification comes to), with no network.
@Suite struct NotifyPushTests {
    /// The push world: answers per device token, and what was opened and sent.
    final class PlannedPush: PushService, PushSending, @unchecked Sendable {
        private let lock = NSLock()
        var answers: [String: PushResult] = [:]
        private(set) var settings: PushSettings?
        private(set) var sent: [PushNotification] = []
        private(set) var shutDown = false

        func open(_ settings: PushSettings) async throws(RaxxError) -> any PushSending {
            lock.withLock { self.settings = settings }
            return self
        }

        /// Tokens whose send does not answer until `release()`; `onSend` hears each send first.
        var hanging: Set<String> = []
        var onSend: @Sendable (PushNotification) -> Void = { _ in }
        private var held: [CheckedContinuation<Void, Never>] = []
        private var released = false

        func send(_ notification: PushNotification) async -> PushResult {
            let (hangs, hear) = lock.withLock { () -> (Bool, @Sendable (PushNotification) -> Void) in
                sent.append(notification)
                return (hanging.contains(notification.deviceToken), onSend)
            }
            hear(notification)
            if hangs {
                await withCheckedContinuation { continuation in
                    let now = lock.withLock {
                        released
                            ? true
                            : {
                                held.append(continuation); return false
                            }()
                    }
                    if now { continuation.resume() }
                }
            }
            return lock.withLock {
                var result = answers[notification.deviceToken] ?? PushResult(status: .delivered, attempts: 1)
                result.apnsID = result.apnsID ?? notification.apnsID
                return result
            }
        }

        /// Lets every hanging send answer.
        func release() {
            let waiting = lock.withLock {
                released = true; defer { held = [] }; return held
            }
            for continuation in waiting { continuation.resume() }
        }

        func shutdown() async { lock.withLock { shutDown = true } }
    }

    static let tokens = (1...4).map { String(repeating: "0\($0)", count: 32) }
    static let arguments = ["--key-file", "/keys/AuthKey.p8", "--key-id", "KEY1234567", "--team-id", "TEAM123456", "--topic", "app.raxx.ios"]

    func world(_ lines: [String], ids: [String] = []) -> (TestWorld, PlannedPush) {
        let world = TestWorld()
        let push = PlannedPush()
        world.services = [Provided(push, as: (any PushService).self)]
        world.stdin = lines.joined(separator: "\n") + "\n"
        world.ids = ids
        return (world, push)
    }

    static func line(_ token: String, _ extra: String = #""payload":{"aps":{"alert":"hi"}}"#) -> String {
        #"{"device_token":"\#(token)",\#(extra)}"#
    }

    func results(_ world: TestWorld) -> [Int: [String: Any]] {
        Dictionary(uniqueKeysWithValues: world.jsonLines.map { ($0["line"] as? Int ?? 0, $0) })
    }

    @Test func sendsEachLineAndAnswersOneResultPerLine() async throws {
        let event =
            #"""
            "event":{"seq":9,"type":"fill_confirmed","created_at":"2026-11-21T10:00:00Z","title":"Filled","symbol":"AAPL","side":"buy",\#
            "qty":10,"price":"190.25"}
            """#
        let (world, push) = world(
            [
                Self.line(Self.tokens[0]),
                Self.line(Self.tokens[1], event + #","apns_id":"6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11","collapse_id":"fills","priority":5,"expiration":0"#),
            ], ids: ["11111111-2222-3333-4444-555555555555"])
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments + ["--endpoint", "sandbox", "--connections", "2"]) == .ok)
        let results = results(world)
        #expect(results.count == 2)
        #expect(results[1]?["status"] as? String == "delivered" && results[1]?["token"] as? String == "01010101")
        #expect(results[1]?["apns_id"] as? String == "11111111-2222-3333-4444-555555555555".uppercased())
        #expect(results[2]?["apns_id"] as? String == "6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11")
        #expect(!world.stdout.contents.contains(Self.tokens[0]))
        let settings = try #require(push.settings)
        #expect(settings.endpoint == APNs.sandboxURL && settings.connections == 2 && settings.keyFile == "/keys/AuthKey.p8")
        let rendered = try #require(push.sent.first { $0.deviceToken == Self.tokens[1] })
        #expect(rendered.priority == .conserve && rendered.collapseID == "fills" && rendered.expiration == 0 && rendered.topic == "app.raxx.ios")
        #expect(String(decoding: rendered.payload, as: UTF8.self).contains(#""body":"Bought 10 AAPL at 190.25""#))
        #expect(push.shutDown)
        // Into a pipe the run ends with its summary on stderr, as on a terminal (it said nothing).
        #expect(
            world.stderr.contents == "raxx-notify push: 2 delivered, 0 unregistered, 0 failed, 0 not sent, 0 malformed, of 2\n",
            "\(world.stderr.contents)")
    }

    @Test func aMalformedLineIsRefusedNamingTheLineAndFieldAndTheStreamGoesOn() async throws {
        let oversized = #""payload":{"aps":{"alert":""# + String(repeating: "x", count: 4100) + #""}}"#
        let (world, push) = world(
            [
                Self.line(Self.tokens[0]),
                "{not json",
                Self.line("abc"),
                Self.line(Self.tokens[1], oversized),
                Self.line(Self.tokens[2], #""payload":{"a":1},"colapse_id":"x""#),
                Self.line(Self.tokens[2], #""payload":{"a":1},"priority":7"#),
                Self.line(Self.tokens[2], #""payload":{"a":1},"event":{}"#),
                "",
                Self.line(Self.tokens[3]),
            ], ids: ["11111111-2222-3333-4444-555555555555", "21111111-2222-3333-4444-555555555555"])
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments) == .dataError)
        let results = results(world)
        #expect(results[1]?["status"] as? String == "delivered" && results[9]?["status"] as? String == "delivered")
        let expected: [Int: String?] = [2: nil, 3: "device_token", 4: "payload", 5: "colapse_id", 6: "priority", 7: "event"]
        for (line, field) in expected {
            #expect(results[line]?["status"] as? String == "malformed", "line \(line)")
            #expect(results[line]?["field"] as? String == field, "line \(line)")
        }
        #expect(results[8] == nil)  // a blank line is no notification
        #expect(push.sent.map(\.deviceToken).sorted() == [Self.tokens[0], Self.tokens[3]])
        #expect(world.stderr.contents.contains("6 of 8 lines were malformed"))
    }

    @Test func unregisteredAndFailedExit1WithApnsTimestamp() async throws {
        let (world, push) = world(
            [Self.line(Self.tokens[0]), Self.line(Self.tokens[1]), Self.line(Self.tokens[2])],
            ids: [
                "11111111-2222-3333-4444-555555555555", "21111111-2222-3333-4444-555555555555",
                "31111111-2222-3333-4444-555555555555",
            ])
        push.answers[Self.tokens[0]] = PushResult(status: .unregistered, reason: "Unregistered", timestamp: 1_795_255_200_500, attempts: 1)
        push.answers[Self.tokens[1]] = PushResult(status: .failed, reason: "BadDeviceToken", attempts: 1)
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments + ["--json"]) == .failure)
        let results = results(world)
        #expect(results[1]?["status"] as? String == "unregistered" && results[1]?["timestamp"] as? String == "2026-11-21T10:00:00.500Z")
        #expect(results[2]?["status"] as? String == "failed" && results[2]?["reason"] as? String == "BadDeviceToken")
        #expect(results[3]?["status"] as? String == "delivered")
        #expect(world.stderr.contents.contains(#""code":"not_delivered""#))
    }

    @Test func anUnreachableEndpointExits69AndListsTheRestAsNotSent() async throws {
        let (world, push) = world(
            (0..<4).map { Self.line(Self.tokens[$0]) },
            ids: (1...4).map { "\($0)1111111-2222-3333-4444-555555555555" })
        push.answers[Self.tokens[0]] = PushResult(status: .notSent, reason: "Unreachable", attempts: 3, detail: "connection refused")
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments + ["--max-in-flight", "1"]) == .unavailable)
        let results = results(world)
        #expect((1...4).allSatisfy { results[$0]?["status"] as? String == "not_sent" })
        #expect(push.sent.count == 1)
        #expect(world.stderr.contents.contains("could not be reached"))
    }

    @Test func refusesAnEndpointThatIsNotHTTPS() async throws {
        let (world, push) = world([Self.line(Self.tokens[0])])
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments + ["--endpoint", "http://127.0.0.1:8443"]) == .usage)
        #expect(push.settings == nil && world.stdout.contents.isEmpty)
    }

    @Test func showsProgressOnATerminalAndKeepsStdoutData() async throws {
        let (world, _) = world([Self.line(Self.tokens[0], #""payload":{"a":1},"apns_id":"6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11""#)])
        world.stderrIsTTY = true
        world.clock = TestClock(Fixtures.now)
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments) == .ok)
        #expect(world.stderr.contents.contains("1 settled: 1 delivered"))
        #expect(!world.stdout.contents.contains("settled") && world.jsonLines.count == 1)
    }

    /// Lines that name no topic, and no --topic: one usage error, nothing opened or sent (not a
    /// malformed result per line).
    @Test func aLineWithoutTopicNeedsTopic() async throws {
        let (world, push) = world([Self.line(Self.tokens[0]), Self.line(Self.tokens[1])])
        #expect(try await world.run(RaxxNotify.Push.self, Array(Self.arguments.dropLast(2)) + ["--format", "text"]) == .usage)
        #expect(world.stderr.contents.hasPrefix("raxx-notify: Line 1 names no topic, and --topic is not given.\n"))
        #expect(world.stdout.contents.isEmpty && push.settings == nil && push.sent.isEmpty)
        // A later line without one, after lines that name theirs, is that line's malformed result.
        let (later, _) = self.world(
            [Self.line(Self.tokens[0], #""topic":"app.raxx.ios","payload":{"a":1}"#), Self.line(Self.tokens[1])],
            ids: ["11111111-2222-3333-4444-555555555555"])
        #expect(try await later.run(RaxxNotify.Push.self, Array(Self.arguments.dropLast(2))) == .dataError)
        #expect(results(later)[2]?["field"] as? String == "topic" && results(later)[1]?["status"] as? String == "delivered")
    }

    /// APNs refusing the provider token stops the run early: the rest is not sent, exit 77 with
    /// what to check.
    @Test func aRefusedProviderTokenStopsTheRunWithExit77() async throws {
        let (world, push) = world((0..<4).map { Self.line(Self.tokens[$0]) }, ids: (1...4).map { "\($0)1111111-2222-3333-4444-555555555555" })
        push.answers[Self.tokens[0]] = PushResult(status: .failed, reason: "InvalidProviderToken", attempts: 1)
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments + ["--max-in-flight", "1", "--format", "text"]) == .notPermitted)
        #expect(push.sent.count == 1)
        #expect(world.stderr.contents.contains("APNs refused the provider token (InvalidProviderToken): 0 delivered, 0 unregistered, 1 failed, 3 not sent"))
        #expect(world.stderr.contents.contains("Check --key-id"))
    }

    /// SIGINT: no more input is read, what is in flight gets a moment, and every line read is
    /// reported (unknown with its apns_id, or not_sent), then the summary, exit 130.
    @Test func anInterruptReportsEveryLineReadAndExits130() async throws {
        let (world, push) = world((0..<4).map { Self.line(Self.tokens[$0]) }, ids: (1...4).map { "\($0)1111111-2222-3333-4444-555555555555" })
        push.hanging = [Self.tokens[1]]
        push.onSend = { notification in if notification.deviceToken == Self.tokens[1] { world.interrupt() } }
        defer { push.release() }
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments + ["--max-in-flight", "1"]) == .interrupted)
        let results = results(world)
        #expect(results[1]?["status"] as? String == "delivered")
        #expect(results[2]?["status"] as? String == "unknown" && results[2]?["apns_id"] as? String == "21111111-2222-3333-4444-555555555555")
        // Line 3 is not read when the stop comes first, or read and held for room in flight:
        // then it is reported not_sent. Line 4 is never read.
        #expect(results[4] == nil)
        if let third = results[3] {
            #expect(third["status"] as? String == "not_sent" && third["apns_id"] as? String == "31111111-2222-3333-4444-555555555555")
            #expect(world.stderr.contents.contains("Stopped by SIGINT: 1 delivered, 0 unregistered, 0 failed, 1 not sent, 1 unknown, 0 malformed, of 3."))
        } else {
            #expect(world.stderr.contents.contains("Stopped by SIGINT: 1 delivered, 0 unregistered, 0 failed, 0 not sent, 1 unknown, 0 malformed, of 2."))
        }
        #expect(push.sent.count == 2)
        // SIGTERM the same way, exit 143.
        let (term, termPush) = self.world([Self.line(Self.tokens[0])], ids: ["11111111-2222-3333-4444-555555555555"])
        termPush.hanging = [Self.tokens[0]]
        termPush.onSend = { _ in term.interrupt(SIGTERM) }
        defer { termPush.release() }
        #expect(try await term.run(RaxxNotify.Push.self, Self.arguments) == .terminated)
        #expect(term.stderr.contents.contains("Stopped by SIGTERM"))
    }

    /// On a terminal the results are a table with a header and each answer's latency.
    @Test func theTextOutputIsATableWithLatency() async throws {
        let (world, push) = world([Self.line(Self.tokens[0])], ids: ["11111111-2222-3333-4444-555555555555"])
        push.answers[Self.tokens[0]] = PushResult(status: .delivered, attempts: 1, latency: .milliseconds(12))
        world.stdoutIsTTY = true
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments) == .ok)
        #expect(
            world.stdout.contents == """
                LINE  TOKEN      STATUS       REASON                  LATENCY   APNS ID
                1     …01010101  delivered    -                       12.0 ms   11111111-2222-3333-4444-555555555555

                """)
    }

    /// On a terminal a result table longer than the screen goes through the pager when the run
    /// ends (its header once, every row); with --no-pager, or a shorter one, it is written as is.
    @Test func aLongResultTableOnATerminalGoesThroughThePager() async throws {
        func run(_ extra: [String] = [], rows: Int = 3) async throws -> TestWorld {
            let (world, _) = world(Self.tokens.map { Self.line($0) }, ids: (1...4).map { "\($0)1111111-2222-3333-4444-555555555555" })
            world.stdoutIsTTY = true
            world.terminalRows = rows
            #expect(try await world.run(RaxxNotify.Push.self, Self.arguments + extra) == .ok)
            return world
        }
        let paged = try await run()
        let text = try #require(paged.paged.first { $0.command == "less -FRX" }?.text)
        #expect(paged.paged.count == 1 && paged.stdout.contents.isEmpty)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 5 && lines[0].hasPrefix("LINE  TOKEN") && lines.dropFirst().allSatisfy { $0.contains("delivered") })
        #expect(Set(lines.dropFirst().map { $0.prefix(1) }) == ["1", "2", "3", "4"])
        let unpaged = try await run(["--no-pager"])
        #expect(unpaged.paged.isEmpty && unpaged.stdout.contents.split(separator: "\n").count == 5)
        let short = try await run(rows: 40)
        #expect(short.paged.isEmpty && short.stdout.contents.hasPrefix("LINE  TOKEN"))
    }

    @Test func thePayloadIsSentAsWrittenWithoutTheWhitespaceBetweenItsTokens() async throws {
        let lines = [
            // Key order kept; spaces between tokens dropped, those inside strings kept; escapes as written.
            Self.line(Self.tokens[0], #""payload" : { "z" : 1, "aps" : { "alert" : "a \"b\" {c} [d], e\\" , "x": [1, 2.5e3, true, null, {}] } }"#),
            // A payload given twice: the last counts, as for any other field.
            Self.line(Self.tokens[1], #""payload":{"first":1},"payload":{"second":2}"#),
            // A key with escapes: the payload is written out again, the same JSON.
            Self.line(Self.tokens[2], #""pay\u006coad":{"aps":{"alert":"hi"}}"#),
        ]
        let (world, push) = world(
            lines,
            ids: [
                "11111111-2222-3333-4444-555555555555", "21111111-2222-3333-4444-555555555555",
                "31111111-2222-3333-4444-555555555555",
            ])
        #expect(try await world.run(RaxxNotify.Push.self, Self.arguments) == .ok)
        func sent(_ token: String) throws -> String {
            String(decoding: try #require(push.sent.first { $0.deviceToken == token }).payload, as: UTF8.self)
        }
        #expect(try sent(Self.tokens[0]) == #"{"z":1,"aps":{"alert":"a \"b\" {c} [d], e\\","x":[1,2.5e3,true,null,{}]}}"#)
        #expect(try sent(Self.tokens[1]) == #"{"second":2}"#)
        #expect(try sent(Self.tokens[2]) == #"{"aps":{"alert":"hi"}}"#)
        for token in Self.tokens.prefix(3) {
            #expect(try JSONSerialization.jsonObject(with: Data(try sent(token).utf8)) is [String: Any])
        }
    }
}

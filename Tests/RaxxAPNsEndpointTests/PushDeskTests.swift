import Foundation
import RaxxAPNs
import Testing

@testable import RaxxAPNsEndpoint

/// Scripted failures, and the desk's answers and log lines.
@Suite struct PushDeskTests {
    let team = Team()

    /// `name` in a folder of its own (the caller removes the folder).
    func temporaryPath(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("apns-desk-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }

    func logLines(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func theTokensFileReadsTokensAndTimestamps() throws {
        let upper = String(repeating: "CD", count: 32)
        let tokens = try FailureScript.readUnregistered("# gone\n\(Team.token) 1700000000123\n\n\(upper)\n")
        #expect(tokens.count == 2)
        #expect(tokens[Team.token] == .some(1_700_000_000_123))
        #expect(tokens[upper.lowercased()] == .some(nil))
        let script = FailureScript(unregistered: tokens)
        #expect(script.unregisteredTimestamp(Team.token.uppercased(), now: 5) == 1_700_000_000_123)
        #expect(script.unregisteredTimestamp(upper, now: 5) == 5)
        #expect(script.unregisteredTimestamp(String(repeating: "ee", count: 32), now: 5) == nil)
        #expect(
            throws: FailureScript.TokensFileError(
                line: 2, message: "expected a hex device token (64 to 200 digits), then optionally a timestamp in milliseconds")
        ) {
            try FailureScript.readUnregistered("\(Team.token)\nnot-a-token\n")
        }
        #expect(throws: FailureScript.TokensFileError.self) { try FailureScript.readUnregistered("\(Team.token) yesterday\n") }
    }

    @Test func theDiceAreSeededAndHonourTheRate() {
        func rolls(_ seed: UInt64) -> [APNsReason?] {
            let script = FailureScript(failRate: 0.25, seed: seed)
            return (0..<2000).map { _ in script.roll() }
        }
        let first = rolls(7), again = rolls(7), other = rolls(8)
        #expect(first == again)
        #expect(first != other)
        let failures = first.compactMap { $0 }
        #expect((350...650).contains(failures.count))  // 500 expected
        #expect(Set(failures) == Set(FailureScript.failures))
        #expect((0..<100).allSatisfy { _ in FailureScript(failRate: 0).roll() == nil })
        let always = FailureScript(failRate: 1, seed: 1)
        #expect((0..<100).allSatisfy { _ in always.roll() != nil })
    }

    @Test func anAcceptedPushIsAnsweredAndLoggedOnce() throws {
        let clock = ManualClock()
        let path = temporaryPath("log.jsonl")
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent()) }
        let log = try PushLog(path: path)
        let desk = PushDesk(
            checks: PushChecks(topic: Team.topic), gate: ProviderTokenGate(teamID: Team.teamID, keys: team.keys),
            log: log, clock: { clock.date })
        var connection = PushDesk.ConnectionState(number: 3)
        let id = "123E4567-E89B-12D3-A456-426614174000"
        let jwt = team.jwt(issuedAt: clock.seconds)
        let request = Team.request(
            jwt: jwt,
            headers: [("apns-id", id), ("apns-collapse-id", "c1"), ("apns-expiration", "1750003600")],
            payload: "{\"aps\":\n {\"alert\":\"hi\"}}")
        let answer = desk.answer(request, connection: &connection, stream: 5)
        #expect(answer.status == 200 && answer.apnsID == id && answer.uniqueID != nil && answer.body.isEmpty)
        #expect(connection.keyID == Team.keyID)
        var refused = Team.request(jwt: jwt, headers: [("apns-priority", "3")])
        refused.headers.removeAll { $0.name == "apns-id" }
        let refusal = desk.answer(refused, connection: &connection, stream: 7)
        #expect(refusal.status == 400 && String(decoding: refusal.body, as: UTF8.self) == #"{"reason":"BadPriority"}"#)
        #expect(APNs.isWellFormedID(refusal.apnsID))
        log.close()

        let lines = try logLines(path)
        #expect(lines.count == 2)
        let accepted = lines[0]
        #expect(accepted["event"] as? String == "accepted" && accepted["status"] as? Int == 200)
        #expect(accepted["apns_id"] as? String == id && accepted["unique_id"] as? String == answer.uniqueID)
        #expect(accepted["device_token"] as? String == Team.token && accepted["topic"] as? String == Team.topic)
        #expect(accepted["push_type"] as? String == "alert" && accepted["priority"] as? Int == 10)
        #expect(accepted["expiration"] as? Int == 1_750_003_600 && accepted["collapse_id"] as? String == "c1")
        #expect(((accepted["payload"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? String == "hi")
        #expect(accepted["kid"] as? String == Team.keyID && accepted["iat"] as? Int == Int(clock.seconds))
        #expect(accepted["connection"] as? Int == 3 && accepted["stream"] as? Int == 5)
        #expect(accepted["time"] as? String == "2025-06-15T15:06:40.000Z")
        let second = lines[1]
        #expect(second["event"] as? String == "refused" && second["status"] as? Int == 400 && second["reason"] as? String == "BadPriority")
        #expect(second["apns_id"] as? String == refusal.apnsID && second["payload"] == nil)
    }

    @Test func unregisteredTokensAnswer410WithTheirTimestamp() throws {
        let clock = ManualClock()
        let gone = String(repeating: "0f", count: 32)
        let desk = PushDesk(
            checks: PushChecks(), gate: ProviderTokenGate(teamID: Team.teamID, keys: team.keys),
            script: FailureScript(unregistered: [Team.token: 1_700_000_000_000, gone: nil]), clock: { clock.date })
        var connection = PushDesk.ConnectionState(number: 1)
        let jwt = team.jwt(issuedAt: clock.seconds)
        let first = desk.answer(Team.request(jwt: jwt), connection: &connection, stream: 1)
        #expect(first.status == 410 && first.reason == .unregistered)
        #expect(String(decoding: first.body, as: UTF8.self) == #"{"reason":"Unregistered","timestamp":1700000000000}"#)
        let second = desk.answer(Team.request(jwt: jwt, token: gone), connection: &connection, stream: 3)
        #expect(second.timestamp == Int64(clock.date.timeIntervalSince1970 * 1000))
        // A malformed request to an unregistered token is refused for what is wrong with it first.
        #expect(desk.answer(Team.request(jwt: jwt, headers: [("apns-priority", "2")]), connection: &connection, stream: 5).reason == .badPriority)
    }

    @Test func failedPushesAreNotAcceptedAndDoNotCountAgainstTheToken() throws {
        let clock = ManualClock()
        let path = temporaryPath("log.jsonl")
        defer { try? FileManager.default.removeItem(at: URL(fileURLWithPath: path).deletingLastPathComponent()) }
        let log = try PushLog(path: path)
        let desk = PushDesk(
            checks: PushChecks(), gate: ProviderTokenGate(teamID: Team.teamID, keys: team.keys, expireAfter: 5),
            script: FailureScript(failRate: 0.5, seed: 42), log: log, clock: { clock.date })
        var connection = PushDesk.ConnectionState(number: 1)
        let jwt = team.jwt(issuedAt: clock.seconds)
        var statuses: [Int] = []
        for stream in 0..<40 {
            let answer = desk.answer(Team.request(jwt: jwt), connection: &connection, stream: stream * 2 + 1)
            statuses.append(answer.status)
            if answer.reason == .expiredProviderToken { break }
        }
        log.close()
        #expect(statuses.filter { $0 == 200 }.count == 5)
        #expect(statuses.last == 403)
        #expect(statuses.contains { [429, 500, 503].contains($0) })
        let lines = try logLines(path)
        #expect(lines.filter { $0["event"] as? String == "accepted" }.count == 5)
        let refusedStatuses = lines.filter { $0["event"] as? String == "refused" }.compactMap { $0["status"] as? Int }
        #expect(refusedStatuses.count == statuses.count - 5)
    }

    @Test func aLogLineEscapesWhatItQuotes() throws {
        let entry = PushLogEntry(
            event: .accepted, status: 200, apnsID: "x", deviceToken: "t", topic: "a\"b\\c\u{1}",
            collapseID: "line\nbreak", payload: Array("{\"k\":\r\n1}".utf8), connection: 1, stream: 1, time: 0)
        let line = entry.jsonLine()
        #expect(!line.contains("\n"))
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["topic"] as? String == "a\"b\\c\u{1}" && object["collapse_id"] as? String == "line\nbreak")
        #expect((object["payload"] as? [String: Any])?["k"] as? Int == 1)
        #expect(object["time"] as? String == "1970-01-01T00:00:00.000Z")
    }
}

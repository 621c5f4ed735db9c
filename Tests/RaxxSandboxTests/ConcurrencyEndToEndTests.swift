import Foundation
import HTTPTypes
import RaxxAPI
import RaxxCore
import RaxxTestSupport
import RaxxWire
import Synchronization
import Testing

@testable import RaxxSandbox

/// The sandbox answers many clients at once and never hangs: a dozen accounts each following
/// their alerts with long polls while each places orders, against a real `raxx-sandbox serve` on a
/// file database (a pool of reader connections), whose cooperative pool is as narrow as this
/// machine's. A blocking database call on that pool once left every thread waiting for a reader
/// that only a waiting task could give back: every request timed out and health never answered
/// again.
@Suite(.serialized, .blocking) struct ConcurrencyEndToEndTests {
    static let accounts = 12
    static let ordersEach = 40
    static let watchersEach = 6

    final class Tally: Sendable {
        let placed = Atomic<Int>(0)
        let tradersDone = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
    }

    @Test func aDozenWatchingTradersAtOnceAreAllAnswered() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("sandbox.sqlite").path
        var tokens: [String] = []
        do {
            let database = try SandboxDatabase(path: path)
            for n in 0..<Self.accounts {
                tokens.append(try await signedInGrant(database, email: "trader\(n)@example.com").accessToken)
            }
        }
        let sandbox = try SandboxProcess(database: path)
        defer { sandbox.stop() }
        let url = try #require(URL(string: sandbox.url))

        let tally = Tally()
        let notAfter = RFC3339.string(from: Date().addingTimeInterval(3600))
        await withTaskGroup(of: Void.self) { group in
            for (n, token) in tokens.enumerated() {
                let headers = ["Authorization": "Bearer \(token)"]
                // The watchers: reads of the feed back to back until every account's orders are answered.
                for _ in 0..<Self.watchersEach {
                    group.addTask {
                        var cursor: Int64 = 0
                        while tally.tradersDone.load(ordering: .acquiring) < Self.accounts {
                            do {
                                let (response, text) = try await httpCall(url, .get, "/api/events?wait=0&cursor=\(cursor)", headers: headers)
                                guard response.status.code == 200 else {
                                    tally.failures.withLock { $0.append("events \(n): \(response.status.code) \(text)") }
                                    return
                                }
                                if let page = try? JSONDecoder().decode(Components.Schemas.EventPage.self, from: Data(text.utf8)) { cursor = page.cursor }
                            } catch {
                                tally.failures.withLock { $0.append("events \(n): \(error)") }
                                return
                            }
                        }
                    }
                }
                // The trader: orders one after another.
                group.addTask {
                    defer { tally.tradersDone.add(1, ordering: .releasing) }
                    for k in 0..<Self.ordersEach {
                        let order =
                            #"""
                            {"client_order_id":"load-\#(n)-\#(k)","symbol":"AAPL","side":"buy","qty":1,"type":"market","tif":"day",\#
                            "not_after":"\#(notAfter)","mode":"paper"}
                            """#
                        do {
                            let (response, text) = try await httpCall(url, .post, "/api/orders", headers: headers, body: order)
                            guard response.status.code == 201 else {
                                tally.failures.withLock { $0.append("order \(n)/\(k): \(response.status.code) \(text)") }
                                return
                            }
                            tally.placed.add(1, ordering: .relaxed)
                        } catch {
                            tally.failures.withLock { $0.append("order \(n)/\(k): \(error)") }
                            return
                        }
                    }
                }
            }
        }
        let failures = tally.failures.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.count) requests failed, first \(failures.prefix(3))")
        #expect(tally.placed.load(ordering: .relaxed) == Self.accounts * Self.ordersEach)
        let health = try? await httpCall(url, .get, "/api/health")
        #expect(health?.0.status.code == 200, "the sandbox no longer answers")
        // A hung server would never finish a graceful stop.
        if health == nil { sandbox.crash() }
    }
}

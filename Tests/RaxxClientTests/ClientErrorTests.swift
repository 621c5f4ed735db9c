import Foundation
import Glibc
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxTestSupport
import RaxxWire
import Testing

/// The generated client over the transport: what a command ends up reporting, and what the
/// connectivity observer hears.
@Suite struct ClientErrorTests {
    final class Observed: @unchecked Sendable {
        private let lock = NSLock()
        private var states: [Connectivity] = []
        func add(_ s: Connectivity) { lock.lock(); states.append(s); lock.unlock() }
        var all: [Connectivity] { lock.lock(); defer { lock.unlock() }; return states }
    }

    func client(_ url: String, observed: Observed) throws -> Client {
        let configuration = try RaxxConfiguration(environment: [
            "HOME": "/tmp", "RAXX_API_URL": url, "RAXX_TIMEOUT": "700ms", "RAXX_CONNECT_TIMEOUT": "1s",
        ])
        return RaptorClient.make(tool: "raxx-test", configuration: configuration, observer: { observed.add($0) })
    }

    func reported(_ url: String, observed: Observed = Observed()) async throws -> RaxxError? {
        do {
            _ = try await client(url, observed: observed).getHealth()
            return nil
        } catch {
            return ErrorMapping.raxxError(from: error)
        }
    }

    @Test func refusedIsOfflineExit69() async throws {
        let listener = try LoopbackListener(.refuse)
        let observed = Observed()
        let e = try #require(try await reported(listener.url, observed: observed))
        #expect(e.status == .unavailable)
        #expect(e.message == RaxxError.offlineMessage)
        #expect(observed.all == [.offlineHard])
    }

    /// A refusing listener keeps its port bound (not listening) until it stops: no other test's
    /// server, started meanwhile on port 0, can be handed the port and answer the client that
    /// should have been refused.
    @Test func aRefusingListenerHoldsItsPortUntilItStops() throws {
        func bindsAgain(_ port: Int) -> Bool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = UInt16(port).bigEndian
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            return withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
        }
        let listener = try LoopbackListener(.refuse)
        #expect(!bindsAgain(listener.port))
        listener.stop()
        #expect(bindsAgain(listener.port))
    }

    @Test func hangingIsOfflineExit69() async throws {
        let listener = try LoopbackListener(.hang)
        defer { listener.stop() }
        let observed = Observed()
        let e = try #require(try await reported(listener.url, observed: observed))
        #expect(e.status == .unavailable)
        #expect(observed.all == [.offlineSoft])
    }

    @Test(arguments: [502, 503, 504])
    func unhealthyServerIsSoftOffline(status: Int) async throws {
        let listener = try LoopbackListener(.respond(status: status, body: "<html>down</html>"))
        defer { listener.stop() }
        let observed = Observed()
        let e = try #require(try await reported(listener.url, observed: observed))
        #expect(e.status == .unavailable)
        #expect(e.message == RaxxError.offlineMessage)
        #expect(!e.message.contains("\(status)"))
        #expect(observed.all == [.offlineSoft])
    }

    @Test func rateLimitedIsTemporary() async throws {
        let listener = try LoopbackListener(.respond(status: 429, headers: ["Retry-After": "7"]))
        defer { listener.stop() }
        let e = try #require(try await reported(listener.url))
        #expect(e.status == .temporary)
        #expect(e.hint == "Try again in 7s.")
    }

    @Test func healthyAnswerIsOnline() async throws {
        let body = #"{"status":"ok","version":"9.9.9","time":"2026-11-21T10:00:00Z"}"#
        let listener = try LoopbackListener(.respond(status: 200, headers: ["Content-Type": "application/json"], body: body))
        defer { listener.stop() }
        let observed = Observed()
        let health = try await client(listener.url, observed: observed).getHealth().ok.body.json
        #expect(health.version == "9.9.9")
        #expect(health.time == RFC3339.date(from: "2026-11-21T10:00:00Z"))
        #expect(observed.all == [.online])
    }

    @Test func unreadableAnswerIsAFailureNotACrash() async throws {
        let listener = try LoopbackListener(.respond(status: 200, headers: ["Content-Type": "application/json"], body: "{nope"))
        defer { listener.stop() }
        let e = try #require(try await reported(listener.url))
        #expect(e.code == "bad_response")
        #expect(e.status == .failure)
    }

    @Test(arguments: [
        ("unauthorized", RaxxCore.ExitStatus.signInRequired), ("session_expired", .signInRequired), ("step_up_required", .notPermitted),
        ("live_trading_refused", .notPermitted), ("staff_only", .notPermitted), ("rate_limited", .temporary),
        ("unavailable", .unavailable), ("bad_request", .dataError), ("not_implemented", .unavailable), ("conflict", .failure),
    ])
    func problemsMapToExitStatuses(code: String, status: RaxxCore.ExitStatus) {
        let problem = Components.Schemas.Problem(title: "Something.", status: 400, code: code)
        #expect(ErrorMapping.raxxError(problem: problem).status == status)
    }
}

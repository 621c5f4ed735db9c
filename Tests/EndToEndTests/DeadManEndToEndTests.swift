import Foundation
import RaxxCore
import RaxxTestSupport
import RaxxWire
import Testing

/// The dead man's switch end to end: raxx-order against a sandbox behind a proxy that a test cuts.
/// Its tools are waited for in place: the suite runs on the blocking lanes, not on the pool.
@Suite(.serialized, .blocking) struct DeadManEndToEndTests {
    /// A raxx-order running in the background, its output collected as it comes.
    final class Running: @unchecked Sendable {
        let process = Process()
        let stdout: Collected
        let stderr: Collected

        init(_ home: OrderHome, _ arguments: [String], input: String? = nil, environment extra: [String: String] = [:]) throws {
            process.executableURL = URL(fileURLWithPath: BuiltTools.path("raxx-order"))
            process.arguments = arguments
            process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(home.environment) { _, b in b }
                .merging(extra) { _, b in b }
            let out = Pipe(), err = Pipe(), inPipe = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = inPipe
            stdout = Collected(out.fileHandleForReading)
            stderr = Collected(err.fileHandleForReading)
            try process.run()
            if let input { try? inPipe.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
            try? inPipe.fileHandleForWriting.close()
        }

        /// Waits up to `seconds` for `condition`; answers whether it came true.
        @discardableResult
        func wait(_ seconds: Double = 60, until condition: () -> Bool) async throws -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while !condition(), Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
            return condition()
        }

        /// Waits for the process to end (up to `seconds`, then kills it); answers its status.
        func finish(_ seconds: Double = 120) async throws -> Int32 {
            try await wait(seconds) { !process.isRunning }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            return process.terminationStatus
        }

        /// Everything written to stdout and stderr, once the process closed them.
        func output() -> (stdout: String, stderr: String) {
            (stdout.finish(), stderr.finish())
        }

        deinit { if process.isRunning { process.terminate() } }
    }

    /// Short timeouts: the watcher sees the cut within seconds rather than the default 20 s.
    static let quick = ["RAXX_TIMEOUT": "3s", "RAXX_CONNECT_TIMEOUT": "2s"]

    static func resting(_ id: String, symbol: String = "MSFT") -> String {
        #"{"symbol":"\#(symbol)","side":"buy","qty":2,"type":"limit","limit_price":"1.00","tif":"gtc","client_order_id":"\#(id)"}"#
    }

    func watchLines(_ home: OrderHome, _ text: String) -> [[String: Any]] {
        home.lines(text).filter { $0["id"] != nil }  // watch's order lines (place's results carry order_id)
    }

    @Test func aCutConnectionHasTheServerCancelTheRestingOrderAndTheNextRunSaysSo() async throws {
        let home = try OrderHome(throughProxy: true)
        let proxy = try #require(home.proxy)
        // One order that rests, one that fills at once: the filled one is reported filled, not cancelled.
        let batch = Self.resting("dm-rest") + "\n" + #"{"symbol":"AAPL","side":"buy","qty":1,"client_order_id":"dm-fill"}"#
        let watch = try running(home, ["place", "--watch", "--cancel-after", "5s"], input: batch, environment: Self.quick)
        #expect(try await watch.wait { watchLines(home, watch.stdout.text).count >= 2 }, "\(watch.stderr.text)")
        // A renewal goes through first: the switch's deadline moves on the server.
        let armedUntil = try home.sql("SELECT fires_at FROM cancel_after")
        #expect(
            try await watch.wait {
                let now = home.sqlValue("SELECT fires_at FROM cancel_after"); return !now.isEmpty && now != armedUntil
            })
        let cut = Date()
        proxy.cut()
        #expect(
            try await watch.wait { watch.stderr.text.contains("No connection — the server will cancel the watched orders at ") },
            "\(watch.stderr.text)")
        // Until the server's scan, after the deadline (5 s after the last renewal), cancels the order.
        #expect(try await watch.wait(30) { home.sqlValue("SELECT status FROM orders WHERE client_order_id = 'dm-rest'") == "cancelled" })
        let restored = Date()
        proxy.restore()
        let status = try await watch.finish()
        let said = watch.output().stderr
        #expect(status == 69, "\(said)")
        #expect(said.contains("raxx-order: Connection back."))
        #expect(said.contains("was cancelled by the server at "), "\(said)")
        #expect(said.contains("(buy 1 AAPL) filled at "), "\(said)")
        #expect(said.contains("order was cancelled by the server's dead man's switch, which fired because it was not renewed in time"))

        // The next run (whatever the command) says which order the switch cancelled, and when, once.
        let next = try home.run(["list", "--limit", "1000"])
        #expect(next.status == 0)
        let orders = home.lines(next.stdout).filter { ["dm-rest", "dm-fill"].contains($0["client_order_id"] as? String ?? "") }
        let rest = try #require(orders.first { $0["client_order_id"] as? String == "dm-rest" })
        #expect(rest["status"] as? String == "cancelled" && rest["reject_code"] as? String == "connection_lost")
        #expect(orders.first { $0["client_order_id"] as? String == "dm-fill" }?["status"] as? String == "filled")
        // Cancelled by the server while the connection was cut, within the timeout and one renewal
        // period of the cut (plus the scan and a loaded machine's slack).
        let cancelledAt = try #require((rest["updated_at"] as? String).flatMap(RFC3339.date(from:)))
        #expect(cancelledAt >= cut.addingTimeInterval(-1) && cancelledAt < restored, "\(cancelledAt) \(cut) \(restored)")
        #expect(cancelledAt.timeIntervalSince(cut) <= 5 + 5.0 / 3 + 10, "\(cancelledAt.timeIntervalSince(cut))")
        // The alert is in the feed.
        let feed = try run("raxx-notify", ["list", "--type", "order_cancelled"], environment: home.environment)
        let alerts = home.lines(feed.stdout)
        #expect(alerts.count == 1, "\(feed.stdout)\(feed.stderr)")
        #expect(alerts.first?["title"] as? String == "Cancelled: switch not renewed in time")
        #expect(alerts.first?["order_id"] as? String == rest["id"] as? String)
        // The watch told it on reconnect: the next command does not tell it again.
        #expect(!next.stderr.contains("cancelled by the server"), "\(next.stderr)")
        let again = try home.run(["list", "--status", "open"])
        #expect(!again.stderr.contains("cancelled by the server"), "\(again.stderr)")
    }

    @Test func withTheConnectionIntactTheSwitchNeverFiresWhileWatching() async throws {
        let home = try OrderHome(throughProxy: true)
        let watch = try running(home, ["place", "--watch", "--cancel-after", "5s"], input: Self.resting("dm-kept"))
        #expect(try await watch.wait { !watchLines(home, watch.stdout.text).isEmpty }, "\(watch.stderr.text)")
        let id = try #require(watchLines(home, watch.stdout.text).first?["id"] as? String)
        // Past the first deadline by more than a timeout and a few of the server's scans (every
        // second): only renewals keep it armed so long.
        let firstDeadline = try #require(Double(try home.sql("SELECT fires_at FROM cancel_after")))
        #expect(try await watch.wait(30) { Date().timeIntervalSince1970 > firstDeadline + 5 + 3 })
        #expect(Double(home.sqlValue("SELECT fires_at FROM cancel_after")) ?? 0 > firstDeadline + 5, "renewed")
        #expect(watch.process.isRunning, "\(watch.stderr.text)")
        let shown = try home.run(["show", id])
        #expect(home.lines(shown.stdout).first?["status"] as? String == "open", "\(shown.stdout)")
        // Cancelled by hand, the order is final: the watch disarms the switch and ends with 0.
        #expect(try home.run(["cancel", id]).status == 0)
        #expect(try await watch.finish() == 0, "\(watch.stderr.text)")
        let lines = watchLines(home, watch.output().stdout)
        #expect(lines.map { $0["status"] as? String } == ["open", "cancelled"])
        #expect(lines.last?["reject_code"] == nil)
        let feed = try run("raxx-notify", ["list", "--type", "order_cancelled"], environment: home.environment)
        #expect(home.lines(feed.stdout).isEmpty)
        // Disarmed: a later order of the session is under nothing.
        let heartbeatless = try home.run(["place"], input: Self.resting("dm-after"))
        #expect(heartbeatless.status == 0)
        #expect(try home.sql("SELECT COUNT(*) FROM cancel_after") == "0")
        #expect(try home.sql("SELECT COUNT(*) FROM orders WHERE client_order_id = 'dm-after' AND switch_session_id IS NULL") == "1")
        #expect(try home.orders(["dm-after"]).first?["status"] as? String == "open")
    }

    @Test func disarmKeepsTheOrdersAndSigningOutFiresAtOnce() async throws {
        let home = try OrderHome()
        let armed = try home.run(["place", "--cancel-after", "5s", "--format", "text"], input: Self.resting("dm-disarmed"))
        #expect(armed.status == 0, "\(armed.stderr)")
        #expect(armed.stderr.contains("The dead man's switch is armed: the server cancels the open orders at "))
        let heartbeat = try home.run(["heartbeat"])
        #expect(heartbeat.status == 0)
        #expect(home.lines(heartbeat.stdout).first?["timeout_s"] as? Int == 5)  // the timeout last armed
        #expect(home.lines(heartbeat.stdout).first?["orders"] as? Int == 1)
        let disarm = try home.run(["disarm"])
        #expect(disarm.status == 0)
        #expect(home.lines(disarm.stdout).first?["armed"] as? Bool == false)
        // Nothing is left armed on the server, nor is the order under any switch: nothing can fire.
        #expect(try home.sql("SELECT COUNT(*) FROM cancel_after") == "0")
        #expect(try home.sql("SELECT COUNT(*) FROM orders WHERE client_order_id = 'dm-disarmed' AND switch_session_id IS NULL") == "1")
        #expect(try home.orders(["dm-disarmed"]).first?["status"] as? String == "open")

        let placed = try home.run(["place", "--cancel-after", "10m"], input: Self.resting("dm-signed-out"))
        #expect(placed.status == 0)
        let logout = try run("raxx-auth", ["logout"], environment: home.environment)
        #expect(logout.status == 0, "\(logout.stderr)")
        let login = try run("raxx-auth", ["login", "--pin-fd", "0"], environment: home.environment, input: "246813\n")
        #expect(login.status == 0, "\(login.stderr)")
        // Straight after signing out (no deadline was near): cancelled, as signed out.
        let next = try home.run(["list", "--limit", "1000"])
        let order = try #require(home.lines(next.stdout).first { $0["client_order_id"] as? String == "dm-signed-out" })
        #expect(order["status"] as? String == "cancelled" && order["reject_code"] as? String == "signed_out")
        #expect(home.lines(next.stdout).first { $0["client_order_id"] as? String == "dm-disarmed" }?["status"] as? String == "open")
        // And that run told it.
        #expect(next.stderr.contains("(buy 2 MSFT) was cancelled by the server at "), "\(next.stderr)")
        #expect(next.stderr.contains("the session signed out."))
    }

    /// A tool run to its end.
    func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:], input: String? = nil) throws -> ToolResult {
        try ToolRunner.run(tool, arguments, environment: environment, input: input)
    }

    func running(_ home: OrderHome, _ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> Running {
        try Running(home, arguments, input: input, environment: environment)
    }
}

extension OrderHome {
    /// raxx-order run to its end.
    func run(_ arguments: [String], input: String? = nil, environment: [String: String] = [:]) throws -> ToolResult {
        try order(arguments, input: input, environment: environment)
    }

    func orders(_ ids: Set<String>) throws -> [[String: Any]] {
        let list = try run(["list", "--limit", "1000"])
        return lines(list.stdout).filter { ids.contains($0["client_order_id"] as? String ?? "") }
    }

    /// One value of a query on the sandbox's database.
    func sql(_ query: String) throws -> String { try ToolRunner.sqlite(database, query) }

    /// `sql`, "" when it cannot run: for conditions polled until they hold.
    func sqlValue(_ query: String) -> String { (try? sql(query)) ?? "" }
}

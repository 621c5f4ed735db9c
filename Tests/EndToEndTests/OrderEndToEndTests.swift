import Foundation
import RaxxCore
import RaxxStore
import RaxxTestSupport
import Testing

/// raxx-order against a seeded sandbox, as a shell runs it.
final class OrderHome: @unchecked Sendable {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-e2e-order-\(UUID().uuidString)")
    var sandbox: SandboxProcess!
    var proxy: LoopbackProxy?
    let email = "trader@example.com"
    /// Other folders the test made for this home, removed with it.
    var alsoRemove: [URL] = []

    /// With `throughProxy`, the tools reach the sandbox through a `LoopbackProxy` (from sign-in on:
    /// the proxy's address is the server's origin), which a test can cut.
    init(sandboxArguments: [String] = [], throughProxy: Bool = false) throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "1234123412341234abcdabcdabcdabcd\n".write(to: root.appendingPathComponent("machine-id"), atomically: true, encoding: .utf8)
        let seed = try ToolRunner.run("raxx-sandbox", ["seed", "--db", database, "--email", email, "--positions", "12", "--fills", "60"])
        guard seed.status == 0 else { throw SandboxProcess.SandboxError.didNotStart(seed.stderr) }
        sandbox = try SandboxProcess(arguments: sandboxArguments, database: database)
        if throughProxy { proxy = try LoopbackProxy(to: sandbox.port) }
        let r = try sandbox.register(email, pin: "246813", environment: environment)
        guard r.status == 0 else { throw SandboxProcess.SandboxError.didNotStart(r.stderr) }
    }

    deinit {
        proxy?.stop()
        sandbox?.stop()
        try? FileManager.default.removeItem(at: root)
        for folder in alsoRemove { try? FileManager.default.removeItem(at: folder) }
    }

    var database: String { root.appendingPathComponent("sandbox.sqlite").path }

    var environment: [String: String] {
        [
            "RAXX_HOME": root.appendingPathComponent("home").path, "RAXX_API_URL": proxy?.url ?? sandbox?.url ?? "http://127.0.0.1:9",
            "RAXX_MACHINE_ID_FILE": root.appendingPathComponent("machine-id").path,
        ]
    }

    func order(_ arguments: [String], input: String? = nil, environment extra: [String: String] = [:]) throws -> ToolResult {
        try ToolRunner.run("raxx-order", arguments, environment: environment.merging(extra) { _, new in new }, input: input, timeout: 60)
    }

    func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Orders on the server with these client ids.
    func serverOrders(_ ids: Set<String>) throws -> [[String: Any]] {
        let list = try order(["list", "--limit", "1000"])
        return lines(list.stdout).filter { ids.contains($0["client_order_id"] as? String ?? "") }
    }
}

@Suite(.serialized, .blocking) struct OrderEndToEndTests {
    static let batch = """
        {"symbol":"AAPL","side":"buy","qty":5,"client_order_id":"b-1"}
        {"symbol":"MSFT","side":"buy","qty":2,"type":"limit","limit_price":"1.00","tif":"gtc","client_order_id":"b-2"}
        {"symbol":"SPY","side":"sell","qty":1,"client_order_id":"b-3"}
        """

    @Test func aBatchIsPlacedInOrderAndNeverTwice() throws {
        let home = try OrderHome()
        let first = try home.order(["place"], input: Self.batch)
        #expect(first.status == 0, "\(first.stderr)")
        let results = home.lines(first.stdout)
        #expect(results.map { $0["client_order_id"] as? String } == ["b-1", "b-2", "b-3"])
        #expect(results.map { $0["result"] as? String } == ["placed", "placed", "placed"])
        #expect(results.map { $0["status"] as? String } == ["filled", "open", "filled"])
        // The same pipeline again places nothing new.
        let again = try home.order(["place"], input: Self.batch)
        #expect(again.status == 0)
        #expect(home.lines(again.stdout).map { $0["order_id"] as? String } == results.map { $0["order_id"] as? String })
        #expect(try home.serverOrders(["b-1", "b-2", "b-3"]).count == 3)
        // A reused id with another order is refused by the server's check, before anything is sent.
        let conflict = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "6", "--client-order-id", "b-1"])
        #expect(conflict.status == 65)
        #expect(conflict.stderr.contains("line 1, field 'client_order_id': 'b-1' was used for another order"), "\(conflict.stderr)")
        // The cache was refreshed before the first order went.
        let cache = try ToolRunner.run("raxx-cache", ["status"], environment: home.environment)
        #expect(cache.status == 0)
    }

    /// `raxx-order place < orders.jsonl` run three times, its lines without client_order_id: it
    /// placed every order three times. Now the second run is refused before anything is sent,
    /// naming when the batch was placed and its orders, and --again places it on purpose.
    @Test func aBatchWithoutIdsRunAgainIsRefusedUnlessAgainSaysSo() throws {
        let home = try OrderHome()
        let batch = """
            {"symbol":"AAPL","side":"buy","qty":3}
            {"symbol":"MSFT","side":"buy","qty":1}
            """
        let seeded = home.lines(try home.order(["list", "--limit", "1000"]).stdout).count
        func count() throws -> Int { home.lines(try home.order(["list", "--limit", "1000"]).stdout).count - seeded }
        let first = try home.order(["place"], input: batch)
        #expect(first.status == 0, "\(first.stderr)")
        let placed = home.lines(first.stdout).compactMap { $0["order_id"] as? String }
        #expect(placed.count == 2)
        #expect(try count() == 2)
        for _ in 0..<2 {
            let rerun = try home.order(["place", "--format", "text"], input: batch)
            #expect(rerun.status == 65, "\(rerun.stderr)")
            #expect(rerun.stdout.isEmpty)
            #expect(
                rerun.stderr.contains("were placed already at") && rerun.stderr.contains(placed[0]) && rerun.stderr.contains(placed[1]),
                "\(rerun.stderr)")
            #expect(rerun.stderr.contains("nothing was sent") && rerun.stderr.contains("--again"), "\(rerun.stderr)")
        }
        #expect(try count() == 2, "a refused re-run sent nothing")
        // The same orders in another order, or one more, are another batch.
        let other = try home.order(["place"], input: #"{"symbol":"AAPL","side":"buy","qty":4}"#)
        #expect(other.status == 0, "\(other.stderr)")
        #expect(try count() == 3)
        // Said on purpose: placed again.
        let again = try home.order(["place", "--again"], input: batch)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try count() == 5)
        // A single order from flags is held to the same rule.
        #expect(try home.order(["place", "--symbol", "SPY", "--side", "buy", "--qty", "1"]).status == 0)
        #expect(try home.order(["place", "--symbol", "SPY", "--side", "buy", "--qty", "1"]).status == 65)
        #expect(try count() == 6)
    }

    @Test func aBadBatchSendsNothing() throws {
        let home = try OrderHome()
        let bad = """
            {"symbol":"AAPL","side":"buy","qty":5,"client_order_id":"x-1"}
            {"symbol":"MSFT","side":"buy","qty":2,"type":"limit","client_order_id":"x-2"}
            """
        let r = try home.order(["place", "--format", "text"], input: bad)
        #expect(r.status == 65)
        #expect(r.stderr == "raxx-order: line 2, field 'limit_price': is required for a limit order; no order was sent\n")
        let unknown = try home.order(
            ["place"],
            input: #"{"symbol":"AAPL","side":"buy","qty":1,"client_order_id":"x-3"}"# + "\n"
                + #"{"symbol":"ZZZZ","side":"buy","qty":1,"client_order_id":"x-4"}"#)
        #expect(unknown.status == 65)
        #expect(unknown.stderr.contains("line 2, field 'symbol'"))
        #expect(try home.serverOrders(["x-1", "x-2", "x-3", "x-4"]).isEmpty)
    }

    @Test func offlineNothingIsSentOrQueued() throws {
        let home = try OrderHome()
        let sandbox = try #require(home.sandbox)
        sandbox.stop()  // the server's address refuses connections
        let r = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "1", "--client-order-id", "o-1", "--format", "text"])
        #expect(r.status == 69)
        #expect(r.stderr.hasPrefix("raxx-order: This action requires an internet connection. Try again when online.\n"))
        #expect(r.stdout.isEmpty)
        // Back online, nothing was queued: the order does not exist until it is placed again.
        try sandbox.restart()
        #expect(try home.serverOrders(["o-1"]).isEmpty)
        sandbox.stop()
        let hanging = try LoopbackListener(.hang, port: sandbox.port)
        defer { hanging.stop() }
        let soft = try home.order(
            ["place", "--symbol", "AAPL", "--side", "buy", "--qty", "1", "--client-order-id", "o-2"],
            environment: ["RAXX_TIMEOUT": "1s"])
        #expect(soft.status == 69)
        #expect(!hanging.requests.contains { $0.hasPrefix("POST /api/orders") })
    }

    @Test func liveTradingAndLateOrdersAreRefused() throws {
        let home = try OrderHome(throughProxy: true)
        let live = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "1", "--live", "--format", "text"])
        #expect(live.status == 77)
        #expect(live.stderr == "raxx-order: Live trading is not available from the command line; orders are paper only.\n")
        // The link holds each request 50 ms: an order due within 1 ms arrives late, however fast the
        // machine (on a fast one it reached the server in time, and was placed).
        home.proxy?.requestLatency = .milliseconds(50)
        let late = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "1", "--deadline", "1ms", "--client-order-id", "late-1"])
        #expect(late.status == 1)
        #expect(home.lines(late.stdout).first?["error_code"] as? String == "deadline_passed")
        #expect(try home.serverOrders(["late-1"]).isEmpty)
    }

    @Test func largeOrdersNeedAStepUp() throws {
        let home = try OrderHome(sandboxArguments: ["--step-up-notional", "5000"])
        let refused = try home.order(
            ["place", "--symbol", "MSFT", "--side", "buy", "--qty", "30", "--client-order-id", "big-1", "--pin-fd", "0"],
            input: "000000\n")
        #expect(refused.status == 77)
        #expect(try home.serverOrders(["big-1"]).isEmpty)
        let given = try home.order(
            ["place", "--symbol", "MSFT", "--side", "buy", "--qty", "30", "--client-order-id", "big-2", "--pin-fd", "0"],
            input: "246813\n")
        #expect(given.status == 0, "\(given.stderr)")
        #expect(home.lines(given.stdout).first?["result"] as? String == "placed")
        let small = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "1", "--client-order-id", "small-1"])
        #expect(small.status == 0)  // no PIN asked: none was given
    }

    /// The server's dry run, end to end: `--dry-run` places nothing; a real batch asks one PIN for
    /// its large orders that pass, and sends none that the check says would be rejected.
    @Test func theServerChecksTheBatchFirstAndOnePINConfirmsItsLargeOrders() throws {
        let home = try OrderHome(sandboxArguments: ["--step-up-notional", "5000"])
        func batch(_ prefix: String) -> String {
            [
                #"{"symbol":"MSFT","side":"buy","qty":30,"client_order_id":"\#(prefix)-big-1"}"#,
                #"{"symbol":"AAPL","side":"buy","qty":1,"client_order_id":"\#(prefix)-small"}"#,
                #"{"symbol":"AAPL","side":"buy","qty":1000000,"client_order_id":"\#(prefix)-huge"}"#,
                #"{"symbol":"MSFT","side":"buy","qty":31,"client_order_id":"\#(prefix)-big-2"}"#,
            ].joined(separator: "\n")
        }
        let dry = try home.order(["place", "--dry-run"], input: batch("d"))
        #expect(dry.status == 1, "\(dry.stderr)")
        let checks = home.lines(dry.stdout)
        #expect(checks.map { $0["verdict"] as? String } == ["would_place", "would_place", "would_reject", "would_place"])
        #expect(checks.map { $0["step_up_required"] as? Bool } == [true, false, true, true])
        #expect(checks[2]["code"] as? String == "insufficient_buying_power")
        #expect(try home.serverOrders(["d-big-1", "d-small", "d-huge", "d-big-2"]).isEmpty)
        // The same dry run again: still nothing placed, every verdict the same (nothing stayed).
        let again = try home.order(["place", "--dry-run"], input: batch("d"))
        #expect(home.lines(again.stdout).map { $0["verdict"] as? String } == checks.map { $0["verdict"] as? String })

        // The batch on stdin, one PIN on descriptor 3, read once for both large orders; the huge
        // one is not sent.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-pin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "246813\n".write(to: folder.appendingPathComponent("pin"), atomically: true, encoding: .utf8)
        try batch("r").write(to: folder.appendingPathComponent("batch"), atomically: true, encoding: .utf8)
        let real = try runToEnd(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", #"exec "$0" place --pin-fd 3 3<"$1" <"$2""#, BuiltTools.path("raxx-order"),
                folder.appendingPathComponent("pin").path, folder.appendingPathComponent("batch").path,
            ],
            environment: childEnvironment(home.environment))
        #expect(real.status == 1, "\(real.stderr)")
        let results = home.lines(real.stdout)
        #expect(results.map { $0["result"] as? String } == ["placed", "placed", "not_sent", "placed"])
        #expect(results[2]["error_code"] as? String == "insufficient_buying_power")
        #expect(try home.serverOrders(["r-big-1", "r-small", "r-big-2"]).count == 3)
        #expect(try home.serverOrders(["r-huge"]).isEmpty)
    }

    @Test func aLostReplyIsUnknownThenReconciledToExactlyOneOrder() throws {
        let home = try OrderHome(sandboxArguments: ["--fault-lose-order-replies", "2"])
        let lost = try home.order(
            ["place", "--symbol", "AAPL", "--side", "buy", "--qty", "3", "--client-order-id", "lost-1"],
            environment: ["RAXX_TIMEOUT": "1s"])
        #expect(lost.status == 69)
        #expect(home.lines(lost.stdout).first?["result"] as? String == "unknown")
        let pending = try home.order(
            [
                "place", "--symbol", "SPY", "--side", "buy", "--qty", "1", "--type", "limit", "--limit-price", "1.00",
                "--client-order-id", "lost-2",
            ], environment: ["RAXX_TIMEOUT": "1s"])
        #expect(pending.status == 69)
        // That second run looked the first lost order up before sending anything.
        #expect(pending.stderr.contains("raxx-order: order lost-1: It reached the server: filled"))
        let reconcile = try home.order(["reconcile"])
        #expect(reconcile.status == 0, "\(reconcile.stderr)")
        let settled = home.lines(reconcile.stdout)
        #expect(settled.map { $0["client_order_id"] as? String } == ["lost-2"])
        #expect(settled.first?["outcome"] as? String == "cancelled")
        #expect((settled.first?["message"] as? String)?.contains("still pending when the connection was lost") == true)
        let orders = try home.serverOrders(["lost-1", "lost-2"])
        #expect(orders.count == 2)
        #expect(Set(orders.map { $0["status"] as? String ?? "" }) == ["filled", "cancelled"])
        // Re-running the cancelled one does not pass it off as placed.
        let rerun = try home.order([
            "place", "--symbol", "SPY", "--side", "buy", "--qty", "1", "--type", "limit", "--limit-price", "1.00",
            "--client-order-id", "lost-2",
        ])
        #expect(rerun.status == 1)
        #expect(home.lines(rerun.stdout).first?["result"] as? String == "cancelled")
        // Retrying the lost order's pipeline places nothing new.
        let retry = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "3", "--client-order-id", "lost-1"])
        #expect(retry.status == 0)
        #expect(try home.serverOrders(["lost-1"]).count == 1)
        #expect(try home.order(["reconcile"]).stdout.isEmpty)
    }

    @Test func listAndShowFromTheCacheOffline() throws {
        let home = try OrderHome()
        #expect(try home.order(["place"], input: Self.batch).status == 0)
        #expect(try ToolRunner.run("raxx-cache", ["refresh", "--quiet"], environment: home.environment).status == 0)
        let sandbox = try #require(home.sandbox)
        sandbox.stop()  // offline
        let offline: [String: String] = [:]
        let list = try home.order(["list", "--cached", "--status", "open"], environment: offline)
        #expect(list.status == 0)
        let open = home.lines(list.stdout)
        #expect(open.map { $0["client_order_id"] as? String } == ["b-2"])
        #expect(open.first?["as_of"] != nil)
        let id = try #require(open.first?["id"] as? String)
        let show = try home.order(["show", id, "--cached"], environment: offline)
        #expect(home.lines(show.stdout).first?["status"] as? String == "open")
        #expect(try home.order(["list"], environment: offline).status == 69)
        try sandbox.restart()
        let cancel = try home.order(["cancel", "--all"])
        #expect(home.lines(cancel.stdout).map { $0["status"] as? String } == ["cancelled"])
    }
}

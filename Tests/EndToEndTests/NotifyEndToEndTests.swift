import Foundation
import RaxxCore
import RaxxTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// raxx-notify against a sandbox, as a person or cron runs it.
@Suite(.serialized, .blocking) struct NotifyEndToEndTests {
    func notify(_ home: OrderHome, _ arguments: [String], timeout: Double = 60) throws -> ToolResult {
        try ToolRunner.run("raxx-notify", arguments, environment: home.environment, timeout: timeout)
    }

    @Test func aFillIsAnAlertWithWhatFilled() throws {
        let home = try OrderHome()
        #expect(try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "3", "--client-order-id", "n-1"]).status == 0)
        let list = try notify(home, ["list", "--type", "fill_confirmed"])
        #expect(list.status == 0, "\(list.stderr)")
        let fills = home.lines(list.stdout)
        let fill = try #require(fills.last)
        #expect(fill["type"] as? String == "fill_confirmed")
        #expect(fill["symbol"] as? String == "AAPL" && fill["side"] as? String == "buy" && fill["qty"] as? Int == 3)
        #expect(fill["price"] as? String != nil && fill["order_id"] as? String != nil)
        #expect(!list.stdout.contains("trader@example.com"))  // never the email
    }

    @Test func watchOnceTwicePrintsNothingTheSecondTime() throws {
        let home = try OrderHome()
        #expect(try home.order(["place", "--symbol", "MSFT", "--side", "buy", "--qty", "1", "--client-order-id", "n-2"]).status == 0)
        let first = try notify(home, ["watch", "--once", "--format", "text"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("fill_confirmed"))
        let second = try notify(home, ["watch", "--once", "--format", "text"])
        #expect(second.status == 0)
        #expect(second.stdout.isEmpty && second.stderr.isEmpty)
    }

    @Test func watchSurvivesTheServerGoingAwayWithoutSkippingOrRepeating() throws {
        let home = try OrderHome()
        // Start from now: what the seeded history holds is not this test's.
        #expect(try notify(home, ["watch", "--once"]).status == 0)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltTools.path("raxx-notify"))
        process.arguments = ["watch"]
        process.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"].merging(home.environment) { _, b in b }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let printed = Collected(out.fileHandleForReading)
        /// Waits (up to 30 s: it backs off while the server is away) until `n` fills were printed.
        func waitForFills(_ n: Int) {
            for _ in 0..<300 where printed.text.components(separatedBy: "fill_confirmed").count - 1 < n {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        func place(_ id: String) throws {
            let r = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "1", "--client-order-id", id])
            #expect(r.status == 0, "\(r.stderr)")
        }
        try place("w-1")
        waitForFills(1)
        let sandbox = try #require(home.sandbox)
        sandbox.stop()
        Thread.sleep(forTimeInterval: 2)
        try sandbox.restart()
        try place("w-2")
        waitForFills(2)
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = home.lines(printed.finish())
        let seqs = lines.compactMap { $0["seq"] as? Int }
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "\(seqs)")
        #expect(lines.filter { $0["type"] as? String == "fill_confirmed" }.count == 2, "\(lines)")
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(said.components(separatedBy: "No connection — waiting").count - 1 <= 1, "\(said)")
    }

    @Test func devicesAddListRemoveAndOfflineRegistersNothing() throws {
        let home = try OrderHome()
        let token = String(repeating: "0123456789abcdef", count: 4)
        let add = try notify(home, ["devices", "add", "--token", token, "--environment", "sandbox", "--alerts", "fill_confirmed"])
        #expect(add.status == 0, "\(add.stderr)")
        let device = try #require(home.lines(add.stdout).first)
        #expect(device["token_suffix"] as? String == "89abcdef")
        #expect(!add.stdout.contains(token))
        let id = try #require(device["id"] as? String)
        #expect(home.lines(try notify(home, ["devices", "list"]).stdout).compactMap { $0["id"] as? String } == [id])
        #expect(try notify(home, ["devices", "remove", id]).status == 0)
        #expect(home.lines(try notify(home, ["devices", "list"]).stdout).isEmpty)

        let sandbox = try #require(home.sandbox)
        sandbox.stop()
        let offline = try notify(home, ["devices", "add", "--token", token, "--environment", "sandbox", "--format", "text"])
        #expect(offline.status == 69)
        #expect(offline.stderr.hasPrefix("raxx-notify: This action requires an internet connection. Try again when online."))
        try sandbox.restart()
        #expect(home.lines(try notify(home, ["devices", "list"]).stdout).isEmpty)
    }
}

/// What a child prints, collected as it comes.
final class Collected: @unchecked Sendable {
    private let lock = NSCondition()
    private var data = Data()
    private var ended = false
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                lock.withLock {
                    if chunk.isEmpty { ended = true } else { data.append(chunk) }
                    lock.broadcast()
                }
                if chunk.isEmpty { break }
            }
            done.signal()
        }.start()
    }

    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }

    /// Waits until what was collected satisfies `condition`, the pipe ends, or `timeout` passes;
    /// answers whether it does.
    func wait(timeout: TimeInterval, until condition: (String) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        lock.lock()
        defer { lock.unlock() }
        while !condition(String(decoding: data, as: UTF8.self)) {
            if ended || !lock.wait(until: deadline) { return condition(String(decoding: data, as: UTF8.self)) }
        }
        return true
    }

    /// Waits until the writer closes its end (a child that exits), up to `timeout`; answers whether it did.
    func waitForEnd(timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        lock.lock()
        defer { lock.unlock() }
        while !ended {
            if !lock.wait(until: deadline) { return ended }
        }
        return true
    }

    /// Everything, once the child closed its end.
    func finish() -> String {
        done.wait()
        return text
    }
}

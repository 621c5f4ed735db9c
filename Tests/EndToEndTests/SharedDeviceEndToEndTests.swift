import Foundation
import RaxxCore
import RaxxTestSupport
import Testing

/// One device, several accounts over time, as a shared machine sees them: nothing one account
/// fetched is shown to the next, and what a device keeps of an account goes when the account
/// leaves it (`logout --forget-device`) or no longer exists (erased).
@Suite(.serialized, .blocking) struct SharedDeviceEndToEndTests {
    /// The SQLite files (and their -wal, -shm) anywhere under `folder`: every store a device keeps.
    static func databases(under folder: URL) -> [String] {
        let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.contains(".sqlite") }.sorted()
    }

    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// An account's alerts, cache and journal stay with it: after it signs out with
    /// `--forget-device` they are gone from the device, and the account that signs in next sees
    /// none of them, online or off.
    @Test func theNextAccountOnADeviceSeesNoneOfThePreviousOnesData() throws {
        let home = try OrderHome()
        let placed = try home.order(["place", "--symbol", "AAPL", "--side", "buy", "--qty", "3", "--client-order-id", "first-1"])
        #expect(placed.status == 0, "\(placed.stderr)")
        let orderID = try #require(Self.lines(placed.stdout).first?["order_id"] as? String)
        let first = try ToolRunner.run("raxx-notify", ["list", "--type", "fill_confirmed"], environment: home.environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains(orderID))
        let refresh = try ToolRunner.run("raxx-cache", ["refresh"], environment: home.environment, timeout: 120)
        #expect(refresh.status == 0, "\(refresh.stderr)")
        let deviceHome = home.root.appendingPathComponent("home")
        let kept = Self.databases(under: deviceHome)
        for store in ["alerts.sqlite", "cache.sqlite", "orders.sqlite"] {
            #expect(kept.contains { $0.hasSuffix("/" + store) }, "\(store) in \(kept)")
        }

        let out = try ToolRunner.run("raxx-auth", ["logout", "--forget-device"], environment: home.environment)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(Self.databases(under: deviceHome).isEmpty, "left behind: \(Self.databases(under: deviceHome))")

        let other = try home.sandbox.register("other@example.com", pin: "135792", environment: home.environment)
        #expect(other.status == 0, "\(other.stderr)")
        // Offline: nothing fetched yet for this account.
        let cached = try ToolRunner.run("raxx-notify", ["list", "--cached"], environment: home.environment)
        #expect(cached.status == 3, "\(cached.stderr)")
        #expect(!cached.stdout.contains(orderID))
        // Online: only this account's alerts.
        let online = try ToolRunner.run("raxx-notify", ["list"], environment: home.environment)
        #expect(online.status == 0, "\(online.stderr)")
        #expect(!online.stdout.contains(orderID))
        let show = try ToolRunner.run("raxx-cache", ["show", "positions"], environment: home.environment)
        #expect(show.status == 3, "\(show.stderr)")
        #expect(show.stdout.isEmpty)
        let orders = try home.order(["list", "--cached"])
        #expect(!orders.stdout.contains(orderID) && !orders.stdout.contains("first-1"))
    }

    /// An account that was erased is told so at its device's next contact: the device drops its
    /// passkey, session, cache, journal and alerts, and the person can register anew at once.
    @Test func anErasedAccountsDeviceDropsWhatItKeptOfItAtTheNextContact() throws {
        let home = try DSRHome()
        let subject = home.environment(home.subjectEmail)
        let subjectHome = home.root.appendingPathComponent("subject")
        let order = try ToolRunner.run("raxx-order", ["place", "--symbol", "AAPL", "--side", "buy", "--qty", "1"], environment: subject)
        #expect(order.status == 0, "\(order.stderr)")
        #expect(try ToolRunner.run("raxx-notify", ["list"], environment: subject).status == 0)
        #expect(try ToolRunner.run("raxx-cache", ["refresh"], environment: subject, timeout: 120).status == 0)
        #expect(Self.databases(under: subjectHome).count >= 3)

        let id = try home.verifiedRequest("erasure")
        let hash = try #require(home.lines(try home.dsr(["plan", id]).stdout).first?["plan_hash"] as? String)
        let applied = try home.dsr(["apply", id, "--plan-hash", hash, "--confirm", home.subjectEmail, "--pin-fd", "0"], input: DSRHome.pin)
        #expect(applied.status == 0, "\(applied.stderr)")

        // Offline reads still answer from what is kept: the device has not heard yet.
        #expect(try ToolRunner.run("raxx-notify", ["list", "--cached"], environment: subject).status == 0)
        // The next contact tells it.
        let next = try ToolRunner.run("raxx-notify", ["list"], environment: subject)
        #expect(next.status == 4, "\(next.stderr)")
        #expect(next.stderr.contains("This account no longer exists"), "\(next.stderr)")
        #expect(!next.stderr.contains("401"))
        #expect(Self.databases(under: subjectHome).isEmpty, "left behind: \(Self.databases(under: subjectHome))")
        let status = try ToolRunner.run("raxx-auth", ["status"], environment: subject)
        #expect(Self.lines(status.stdout).first?["passkey"] as? Bool == false, "\(status.stdout)")
        // So the person can open a new account on this device without removing anything by hand.
        let again = try home.sandbox.register(home.subjectEmail, pin: "135792", environment: subject)
        #expect(again.status == 0, "\(again.stderr)")
    }

    /// The renewal path says the same: a device whose access token lapsed hears it when renewing.
    @Test func aRenewalOfAnErasedAccountsSessionSaysTheAccountIsGone() throws {
        let home = try DSRHome(sandboxArguments: ["--token-ttl", "2s"])
        let subject = home.environment(home.subjectEmail)
        #expect(try ToolRunner.run("raxx-notify", ["list"], environment: subject).status == 0)
        let id = try home.verifiedRequest("erasure")
        let hash = try #require(home.lines(try home.dsr(["plan", id]).stdout).first?["plan_hash"] as? String)
        #expect(try home.dsr(["apply", id, "--plan-hash", hash, "--confirm", home.subjectEmail, "--pin-fd", "0"], input: DSRHome.pin).status == 0)
        // Until the subject's access token is past its end: the next call renews.
        #expect(try ToolRunner.waitUntil(.accessToken, environment: subject))
        let next = try ToolRunner.run("raxx-notify", ["list"], environment: subject)
        #expect(next.status == 4, "\(next.stderr)")
        #expect(next.stderr.contains("This account no longer exists"), "\(next.stderr)")
        #expect(Self.databases(under: home.root.appendingPathComponent("subject")).isEmpty)
    }
}

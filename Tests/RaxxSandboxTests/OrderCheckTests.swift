import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxTestSupport
import Testing

@testable import RaxxSandbox

/// The server's dry run (`checkOrders`): judged as placeOrder would, nothing kept.
@Suite struct OrderCheckTests {
    func request(_ id: String, qty: Int64 = 2, rig: SwitchRig) -> Components.Schemas.OrderRequest {
        .init(
            clientOrderId: id, symbol: "MSFT", side: .buy, qty: qty, _type: .limit, limitPrice: "1.00", tif: .gtc,
            notAfter: rig.clock.now.addingTimeInterval(60), mode: .paper)
    }

    @Test func aCheckKeepsNothingAndAnIdTwiceIsRefused() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        let checks = try await rig.service.orders.checkOrders(
            .init(
                body: .json(
                    .init(orders: [
                        request("c-1", rig: rig), request("c-2", rig: rig), request("c-1", qty: 3, rig: rig),
                    ]))), caller: caller
        ).ok.body.json.checks
        #expect(checks.map(\.verdict) == [.wouldPlace, .wouldPlace, .refused])
        #expect(checks[2].code == "conflict" && checks[2].orderId == nil)
        // Nothing stayed: no order, and the same ids place for real afterwards.
        #expect(try await rig.service.stores.trading.read { try $0.order(account: caller.accountID, clientOrderID: "c-1") } == nil)
        let placed = try await rig.rest(caller, "c-1")
        #expect(placed.clientOrderId == "c-1" && placed.status == .open)
        // Checked again, the placed one is already placed, with its real id.
        let again = try await rig.service.orders.checkOrders(.init(body: .json(.init(orders: [request("c-1", rig: rig)]))), caller: caller)
            .ok.body.json.checks
        #expect(again.first?.verdict == .alreadyPlaced && again.first?.orderId == placed.id)
    }

    /// A dry run's ledger leaves out what only a committed transaction keeps, inside its own
    /// transaction already; the same writes on an ordinary ledger are there.
    @Test func aDryRunsLedgerWritesNoAuditEntryChangeOrEvent() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        struct Rollback: Error { let counts: [Int] }
        let now = rig.clock.now
        for dryRun in [true, false] {
            do {
                _ = try await rig.service.stores.trading.write(dryRun: dryRun) { ledger -> Int in
                    func counts() throws -> [Int] {
                        try ["audit_events", "change_log", "events"].map { try Int.fetchOne(ledger.db, sql: "SELECT COUNT(*) FROM \($0)") ?? 0 }
                    }
                    let before = try counts()
                    try ledger.audit(AuditEntry(at: now, actor: caller.userID, action: .orderPlaced, subject: caller.accountID))
                    try ledger.recordChange(account: caller.accountID, .order, "ord_dry", at: now)
                    try ledger.event(NewEvent(user: caller.userID, type: .orderRejected, order: "ord_dry", title: "t", body: nil, at: now))
                    throw Rollback(counts: zip(try counts(), before).map { $0 - $1 })
                }
            } catch let rollback as Rollback {
                #expect(rollback.counts == (dryRun ? [0, 0, 0] : [1, 1, 1]))
            }
        }
    }

    /// The step-up threshold (10,000 by default) is compared in ticks: an order whose notional is
    /// the threshold exactly needs none, a tick more does.
    @Test func theStepUpThresholdIsExactToTheTick() async throws {
        let rig = try SwitchRig()
        let caller = try await rig.signIn()
        func check(_ qty: Int64, at price: String) async throws -> Components.Schemas.OrderCheck {
            var order = request("t-\(qty)-\(price)", qty: qty, rig: rig)
            order.limitPrice = price
            return try await rig.service.orders.checkOrders(.init(body: .json(.init(orders: [order]))), caller: caller).ok.body.json.checks[0]
        }
        let atThreshold = try await check(10_000, at: "1.00")
        #expect(atThreshold.notional == "10000.00" && !atThreshold.stepUpRequired && atThreshold.actionHash == nil)
        let aTickUnder = try await check(10_001, at: "0.9999")
        #expect(aTickUnder.notional == "9999.9999" && !aTickUnder.stepUpRequired)
        let aTickOver = try await check(10_000, at: "1.0001")
        #expect(aTickOver.notional == "10001.00" && aTickOver.stepUpRequired && aTickOver.actionHash != nil)
        let justOver = try await check(10_001, at: "1.00")
        #expect(justOver.stepUpRequired)
    }
}

import Foundation
import GRDB
import Logging
import RaxxAPI
import Testing

@testable import RaxxSandbox

/// A `EventPushSending` that records what it is given and answers from a script (delivered otherwise).
final class RecordingSender: EventPushSending, @unchecked Sendable {
    private let lock = NSLock()
    private var sent: [OutgoingPush] = []
    private let answer: @Sendable (OutgoingPush) -> PushVerdict

    init(answer: @escaping @Sendable (OutgoingPush) -> PushVerdict = { _ in .delivered }) { self.answer = answer }

    var pushes: [OutgoingPush] { lock.withLock { sent } }

    func deliver(_ pushes: [OutgoingPush]) async -> [PushVerdict] {
        lock.withLock { sent += pushes }
        return pushes.map(answer)
    }
}

extension HandlerRig {
    func dispatcher(_ sender: RecordingSender) -> PushDispatcher {
        PushDispatcher(
            store: stores.pushDispatch, notifier: database.notifier, sender: sender, clock: clock,
            logger: Logger(label: "test"))
    }

    /// Runs the dispatcher's passes until it has nothing left; answers the passes that sent.
    @discardableResult
    func drain(_ dispatcher: PushDispatcher) async throws -> Int {
        var cursor = try await stores.pushDispatch.start(), passes = 0
        while let next = try await dispatcher.dispatch(after: cursor) { cursor = next; passes += 1 }
        return passes
    }
}

@Suite struct PushDispatchTests {
    @Test func aFillGoesOnceToTheDevicesThatOptedIntoIt() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let (other, _) = try await rig.signIn("other@example.com")
        // Before dispatch starts: an event that must never be pushed.
        _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("before"))), caller: caller).created
        let sender = RecordingSender()
        let dispatcher = rig.dispatcher(sender)
        _ = try await rig.stores.pushDispatch.start()

        let fills = try await rig.register(caller, token: apnsToken("f111f111"), alerts: [.fillConfirmed])
        _ = try await rig.register(caller, token: apnsToken("5ec05ec0"), alerts: [.securityAlert])
        _ = try await rig.register(other, token: apnsToken("07e407e4"))
        let placed = try await rig.orders.placeOrder(.init(body: .json(rig.order("a"))), caller: caller).created.body.json
        #expect(placed.status == .filled)
        try await rig.drain(dispatcher)

        let pushes = sender.pushes
        #expect(pushes.count == 1)
        let push = try #require(pushes.first)
        #expect(push.deviceID == fills.id && push.token == apnsToken("f111f111"))
        #expect(push.event._type == .fillConfirmed && push.event.orderId == placed.id)
        #expect(push.apnsID == PushDispatcher.apnsID(seq: push.event.seq, device: fills.id))
        // Nothing new: nothing sent again.
        #expect(try await rig.drain(dispatcher) == 0)
        #expect(sender.pushes.count == 1)
    }

    /// An event whose stored type is none of the spec's is passed over (and logged), not pushed
    /// as another type nor retried for ever: the events after it still go out.
    @Test func anEventOfAnUnknownTypeIsPassedOverAndTheNextOneStillGoesOut() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let sender = RecordingSender()
        let dispatcher = rig.dispatcher(sender)
        _ = try await rig.stores.pushDispatch.start()
        let device = try await rig.register(caller, token: apnsToken("f111f111"), alerts: [.fillConfirmed])
        let first = try await rig.orders.placeOrder(.init(body: .json(rig.order("a"))), caller: caller).created.body.json
        try await rig.database.writer.write { db in
            try db.execute(sql: "UPDATE events SET type = 'renamed' WHERE order_id = ?", arguments: [first.id])
        }
        let second = try await rig.orders.placeOrder(.init(body: .json(rig.order("b"))), caller: caller).created.body.json
        try await rig.drain(dispatcher)
        #expect(sender.pushes.map(\.event.orderId) == [second.id])
        #expect(sender.pushes.map(\.deviceID) == [device.id])
        #expect(try await rig.drain(dispatcher) == 0)
    }

    @Test func aDeviceRegisteredAfterAnEventDoesNotGetIt() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let sender = RecordingSender()
        let dispatcher = rig.dispatcher(sender)
        _ = try await rig.stores.pushDispatch.start()
        _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("a"))), caller: caller).created
        // Registered at the same instant is "before" (the clock is fixed); one second later is after.
        let later = HandlerRig.now.addingTimeInterval(1)
        let lateRig = DeviceHandlers(devices: rig.stores.devices, clock: { later })
        _ = try await lateRig.registerAPNsDevice(.init(body: .json(.init(token: apnsToken(), environment: .sandbox))), caller: caller).created
        try await rig.drain(dispatcher)
        #expect(sender.pushes.isEmpty)
    }

    @Test func unregisteredRevokesOnlyATokenRegisteredBeforeApnsSaidSo() async throws {
        let rig = try HandlerRig()
        let (caller, _) = try await rig.signIn()
        let gone = try await rig.register(caller, token: apnsToken("90e090e0"))
        let fresh = try await rig.register(caller, token: apnsToken("f4e5f4e5"))
        let sender = RecordingSender { push in
            // APNs saw the first token die a minute after it was registered; the second was
            // registered an hour after its token's (stale) unregistration.
            push.deviceID == gone.id ? .unregistered(HandlerRig.now.addingTimeInterval(60)) : .unregistered(HandlerRig.now.addingTimeInterval(-3600))
        }
        let dispatcher = rig.dispatcher(sender)
        _ = try await rig.stores.pushDispatch.start()
        _ = try await rig.orders.placeOrder(.init(body: .json(rig.order("a"))), caller: caller).created
        try await rig.drain(dispatcher)
        #expect(Set(sender.pushes.map(\.deviceID)) == [gone.id, fresh.id])
        #expect(try await rig.activeDevices(caller).map(\.id) == [fresh.id])
        let trail = try await rig.auditTrail()
        let unregistered = trail.filter { $0.action == "device.unregistered" }
        #expect(unregistered.count == 1)
        #expect(unregistered.first?.details["device_id"] == gone.id)
        let actors = try await rig.database.writer.read { try String.fetchAll($0, sql: "SELECT actor FROM audit_events WHERE action = 'device.unregistered'") }
        #expect(actors == ["apns"])
        #expect(unregistered.first?.details["token_suffix"] == "90e090e0")
    }

    @Test func apnsIDsAreStableUUIDs() {
        let a = PushDispatcher.apnsID(seq: 7, device: "dev_1")
        #expect(a == PushDispatcher.apnsID(seq: 7, device: "dev_1"))
        #expect(a != PushDispatcher.apnsID(seq: 8, device: "dev_1") && a != PushDispatcher.apnsID(seq: 7, device: "dev_2"))
        #expect(UUID(uuidString: a) != nil)
    }
}

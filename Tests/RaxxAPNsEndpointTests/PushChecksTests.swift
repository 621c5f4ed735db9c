import Foundation
import RaxxAPNs
import Testing

@testable import RaxxAPNsEndpoint

/// Each stateless check, and the reason Apple gives for its failure.
@Suite struct PushChecksTests {
    let checks = PushChecks(topic: Team.topic)

    func reason(_ request: PushRequest) -> APNsReason? {
        switch checks.head(request) {
        case .failure(let refusal): return refusal.reason
        case .success(let head):
            switch checks.notification(request, deviceToken: head.deviceToken) {
            case .failure(let refusal): return refusal.reason
            case .success: return nil
            }
        }
    }

    @Test func aWellFormedRequestPasses() throws {
        let request = Team.request(
            jwt: "a.b.c",
            headers: [
                ("apns-expiration", "0"), ("apns-collapse-id", "fills"),
                ("apns-id", "123e4567-e89b-12d3-a456-426614174000"),
            ])
        let head = try checks.head(request).get()
        #expect(head.deviceToken == Team.token && head.bearer == "a.b.c")
        let notification = try checks.notification(request, deviceToken: head.deviceToken).get()
        #expect(notification.topic == Team.topic && notification.pushType == .alert && notification.priority == 10)
        #expect(notification.expiration == 0 && notification.collapseID == "fills")
        #expect(PushChecks.requestedID(request) == "123e4567-e89b-12d3-a456-426614174000")
    }

    @Test func defaultsWhenOptionalHeadersAreAbsent() throws {
        var request = Team.request(jwt: "a.b.c")
        request.headers.removeAll { $0.name == "apns-priority" || $0.name == "apns-push-type" }
        let notification = try checks.notification(request, deviceToken: Team.token).get()
        #expect(notification.priority == 10 && notification.pushType == nil && notification.expiration == nil && notification.collapseID == nil)
        #expect(PushChecks.requestedID(request) == nil)
    }

    @Test func methodPathAndToken() {
        #expect(reason(Team.request(jwt: "a.b.c", method: "GET")) == .methodNotAllowed)
        #expect(APNsReason.methodNotAllowed.status == 405)
        #expect(reason(Team.request(jwt: "a.b.c", path: "/3/devices/" + Team.token)) == .badPath)
        #expect(reason(Team.request(jwt: "a.b.c", path: "/3/device/\(Team.token)/x")) == .badPath)
        #expect(reason(Team.request(jwt: "a.b.c", path: "/3/device/\(Team.token)?x=1")) == .badPath)
        #expect(APNsReason.badPath.status == 404)
        #expect(reason(Team.request(jwt: "a.b.c", path: "/3/device/")) == .missingDeviceToken)
        #expect(reason(Team.request(jwt: "a.b.c", token: "abc")) == .badDeviceToken)
        #expect(reason(Team.request(jwt: "a.b.c", token: String(repeating: "zz", count: 32))) == .badDeviceToken)
        #expect(reason(Team.request(jwt: "a.b.c", token: String(repeating: "a", count: 65))) == .badDeviceToken)
    }

    @Test func authorizationHeader() {
        #expect(reason(Team.request(jwt: nil)) == .missingProviderToken)
        var basic = Team.request(jwt: nil)
        basic.headers.append((name: "authorization", value: "basic abc"))
        #expect(reason(basic) == .invalidProviderToken)
        var empty = Team.request(jwt: nil)
        empty.headers.append((name: "authorization", value: "bearer   "))
        #expect(reason(empty) == .missingProviderToken)
    }

    @Test func duplicateHeaders() {
        #expect(
            reason(
                Team.request(
                    jwt: "a.b.c",
                    headers: [("apns-collapse-id", "a")]
                        + [("apns-expiration", "1"), ("apns-expiration", "2")])) == .duplicateHeaders)
        var twice = Team.request(jwt: "a.b.c")
        twice.headers.append((name: "apns-topic", value: Team.topic))
        #expect(reason(twice) == .duplicateHeaders)
    }

    @Test func topic() {
        var missing = Team.request(jwt: "a.b.c")
        missing.headers.removeAll { $0.name == "apns-topic" }
        #expect(reason(missing) == .missingTopic)
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-topic", "")])) == .missingTopic)
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-topic", "app raxx")])) == .badTopic)
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-topic", "com.other.app")])) == .deviceTokenNotForTopic)
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-topic", Team.topic + ".voip"), ("apns-push-type", "voip")])) == nil)
        // Without --topic any well-formed topic is served.
        let open = PushChecks()
        #expect((try? open.notification(Team.request(jwt: "a.b.c", headers: [("apns-topic", "com.other.app")]), deviceToken: Team.token).get()) != nil)
    }

    @Test func pushTypePriorityExpirationCollapseIDAndID() {
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-push-type", "shout")])) == .invalidPushType)
        for value in ["10", "5", "1"] { #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-priority", value)])) == nil) }
        for value in ["7", "high", ""] { #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-priority", value)])) == .badPriority) }
        for value in ["soon", "-1", "1.5", "", "99999999999999999999"] {
            #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-expiration", value)])) == .badExpirationDate)
        }
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-collapse-id", String(repeating: "c", count: 64))])) == nil)
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-collapse-id", String(repeating: "c", count: 65))])) == .badCollapseId)
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-collapse-id", String(repeating: "é", count: 33))])) == .badCollapseId)
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-id", "not-a-uuid")])) == .badMessageId)
        // Not canonical (Foundation's UUID parser reads both): a dash moved, a space for a digit.
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-id", "97-2CA93-5460-43D5-AEEA-23BC600424DF")])) == .badMessageId)
        #expect(reason(Team.request(jwt: "a.b.c", headers: [("apns-id", "FA79AA93-8B1F-4887-A8A4-E0 719BBE84A")])) == .badMessageId)
    }

    @Test func payload() {
        #expect(reason(Team.request(jwt: "a.b.c", payload: "")) == .payloadEmpty)
        #expect(reason(Team.request(jwt: "a.b.c", payload: "[1,2]")) == .payloadEmpty)
        #expect(reason(Team.request(jwt: "a.b.c", payload: "{not json")) == .payloadEmpty)
        let filler = String(repeating: "x", count: APNs.maxPayloadBytes - #"{"a":""}"#.utf8.count)
        #expect(reason(Team.request(jwt: "a.b.c", payload: #"{"a":"\#(filler)"}"#)) == nil)
        #expect(reason(Team.request(jwt: "a.b.c", payload: #"{"a":"\#(filler)x"}"#)) == .payloadTooLarge)
        #expect(APNsReason.payloadTooLarge.status == 413)
    }
}

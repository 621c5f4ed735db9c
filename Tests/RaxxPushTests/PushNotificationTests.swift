import Crypto
import Foundation
import PropertyBased
import RaxxAPNs
import RaxxCore
import RaxxPush
import RaxxTestSupport
import Testing

/// Requests as Apple's rules have them, and what is refused before anything is sent.
@Suite struct PushNotificationTests {
    static let token = String(repeating: "0a1b2c3d", count: 8)
    static let providerToken = "h.c.s"

    static func notification(_ change: (inout PushNotification) -> Void = { _ in }) -> PushNotification {
        var n = PushNotification(deviceToken: token, topic: "app.raxx.ios", payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        change(&n)
        return n
    }

    /// An apns-id is a UUID in canonical form (8-4-4-4-12 hex digits, either case), as APNs takes
    /// one: checked against a regular expression over valid UUIDs and near misses (a character
    /// changed, dropped or added, a non-ASCII letter). Foundation's parser, used before, also read
    /// non-canonical text that APNs answers BadMessageId ("97-2CA93-5460-43D5-AEEA-23BC600424DF",
    /// a space for a digit); every canonical one it reads.
    @Test func anApnsIDIsWellFormedExactlyWhenFoundationReadsItAsAUUID() async {
        let alphabet = Array("0123456789abcdefABCDEF-gGzZ {}\u{e9}\u{ff10}")
        await propertyCheck(count: 5_000, input: Gen.uint64()) { seed in
            var random = ModelRandom(seed)
            func next() -> Int { Int(truncatingIfNeeded: random.next() >> 1) }
            var characters = Array(next() % 2 == 0 ? UUID().uuidString : UUID().uuidString.lowercased())
            switch next() % 5 {
            case 0: break
            case 1: characters[next() % characters.count] = alphabet[next() % alphabet.count]
            case 2: characters.remove(at: next() % characters.count)
            case 3: characters.insert(alphabet[next() % alphabet.count], at: next() % (characters.count + 1))
            default: characters = (0..<(34 + next() % 5)).map { _ in alphabet[next() % alphabet.count] }
            }
            let text = String(characters)
            let canonical = text.wholeMatch(of: /[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/) != nil
            #expect(APNs.isWellFormedID(text) == canonical, "\(text)")
            if canonical { #expect(UUID(uuidString: text) != nil) }
            #expect(APNs.isWellFormedID(text[...]) == APNs.isWellFormedID(text))
        }
        #expect(APNs.isWellFormedID("6b2c9e0a-3c57-4E73-9e2a-0e8e3e4b7c11"))
        #expect(!APNs.isWellFormedID("6b2c9e0a3c57-4e73-9e2a-0e8e3e4b7c11-"))
        #expect(!APNs.isWellFormedID("FA79AA93-8B1F-4887-A8A4-E0 719BBE84A"))
        #expect(!APNs.isWellFormedID("97-2CA93-5460-43D5-AEEA-23BC600424DF"))
    }

    @Test func aDeviceTokenIsAnEvenRunOf64To200HexDigits() {
        for (token, good) in [
            (String(repeating: "aB", count: 32), true), (String(repeating: "0", count: 200), true),
            (String(repeating: "0", count: 62), false), (String(repeating: "0", count: 202), false),
            (String(repeating: "0", count: 65), false), (String(repeating: "0", count: 63) + "g", false),
            (String(repeating: "0", count: 63) + "\u{ff10}", false),
        ] {
            #expect(APNs.isWellFormedDeviceToken(token) == good, "\(token)")
            #expect(APNs.isWellFormedDeviceToken(token[...]) == good)
        }
    }

    @Test func buildsThePathAndEveryHeaderApplesRulesAskFor() throws {
        let n = Self.notification {
            $0.pushType = .background
            $0.priority = .conserve
            $0.expiration = 1_800_000_000
            $0.collapseID = "fills"
        }
        try n.check()
        let request = n.request(baseURL: "https://127.0.0.1:4443/", providerToken: Self.providerToken, apnsID: "6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11")
        #expect(request.url == "https://127.0.0.1:4443/3/device/\(Self.token)")
        #expect(
            request.headers == [
                "authorization: bearer h.c.s",
                "apns-topic: app.raxx.ios",
                "apns-push-type: background",
                "apns-priority: 5",
                "apns-expiration: 1800000000",
                "apns-collapse-id: fills",
                "apns-id: 6B2C9E0A-3C57-4E73-9E2A-0E8E3E4B7C11",
            ])
        #expect(request.body == n.payload)
    }

    @Test func leavesOutTheOptionalHeadersWhenNotGiven() {
        let request = Self.notification().request(baseURL: APNs.productionURL, providerToken: Self.providerToken, apnsID: "X")
        #expect(request.url == "https://api.push.apple.com/3/device/\(Self.token)")
        #expect(!request.headers.contains { $0.hasPrefix("apns-expiration") || $0.hasPrefix("apns-collapse-id") })
        #expect(request.headers.contains("apns-priority: 10") && request.headers.contains("apns-push-type: alert"))
    }

    @Test func aPayloadOfExactly4096BytesIsTaken() throws {
        let filler = String(repeating: "x", count: 4096 - #"{"a":""}"#.utf8.count)
        try Self.notification { $0.payload = Array(#"{"a":"\#(filler)"}"#.utf8) }.check()
    }

    @Test func refusesLocallyNamingTheField() {
        let cases: [(String, APNsReason?, (inout PushNotification) -> Void)] = [
            ("payload", .payloadTooLarge, { $0.payload = Array(("{\"a\":\"" + String(repeating: "x", count: 4091) + "\"}").utf8) }),
            ("payload", .payloadEmpty, { $0.payload = [] }),
            ("payload", nil, { $0.payload = Array("[1,2]".utf8) }),
            ("collapse_id", .badCollapseId, { $0.collapseID = String(repeating: "c", count: 65) }),
            ("device_token", .badDeviceToken, { $0.deviceToken = "abc" }),
            ("device_token", .badDeviceToken, { $0.deviceToken = String(repeating: "zz", count: 32) }),
            ("apns_id", .badMessageId, { $0.apnsID = "not-a-uuid" }),
            ("topic", .badTopic, { $0.topic = "app raxx" }),
            ("expiration", .badExpirationDate, { $0.expiration = -1 }),
        ]
        for (field, reason, change) in cases {
            do {
                try Self.notification(change).check()
                Issue.record("\(field) was not refused")
            } catch {
                #expect(error.field == field)
                #expect(error.reason == reason)
            }
        }
    }

    @Test func showsOnlyTheTokensLastEightCharacters() {
        #expect(Self.notification().tokenSuffix == "0a1b2c3d")
        // A malformed token's last 8 characters, whatever their bytes (a result line still shows them).
        var odd = Self.notification()
        odd.deviceToken = "abcdefé1234567"
        #expect(odd.tokenSuffix == "é1234567")
        odd.deviceToken = "ab"
        #expect(odd.tokenSuffix == "ab")
    }
}

import Crypto
import Foundation
import RaxxAPNs

@testable import RaxxAPNsEndpoint

/// A team with one provider key, and requests built as a client sends them.
struct Team {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let topic = "app.raxx.ios"
    static let token = String(repeating: "ab", count: 32)

    let key = P256.Signing.PrivateKey()
    let otherKey = P256.Signing.PrivateKey()

    var keys: [String: P256.Signing.PublicKey] { [Self.keyID: key.publicKey] }

    func jwt(issuedAt: Int64, keyID: String = Team.keyID, teamID: String = Team.teamID, signer: P256.Signing.PrivateKey? = nil) -> String {
        // swiftlint:disable:next force_try
        try! ProviderToken.sign(keyID: keyID, teamID: teamID, issuedAt: issuedAt, key: signer ?? key).compact
    }

    static func request(
        jwt: String?, token: String = Team.token, method: String = "POST", path: String? = nil,
        headers: [(String, String)] = [], payload: String = #"{"aps":{"alert":"hello"}}"#
    ) -> PushRequest {
        var fields: [(name: String, value: String)] = []
        if let jwt { fields.append(("authorization", "bearer \(jwt)")) }
        var base: [(String, String)] = [("apns-topic", topic), ("apns-push-type", "alert"), ("apns-priority", "10")]
        for (name, _) in headers { base.removeAll { $0.0 == name } }
        fields += (base + headers).map { (name: $0.0, value: $0.1) }
        return PushRequest(method: method, path: path ?? APNs.pathPrefix + token, headers: fields, body: Array(payload.utf8))
    }
}

/// A clock tests move by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Date
    init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) { now = start }
    var date: Date { lock.withLock { now } }
    var seconds: Int64 { Int64(date.timeIntervalSince1970) }
    func advance(_ seconds: Double) { lock.withLock { now = now.addingTimeInterval(seconds) } }
}

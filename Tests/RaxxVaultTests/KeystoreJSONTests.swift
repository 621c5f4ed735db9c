import Foundation
import PropertyBased
import RaxxTestSupport
import Synchronization
import Testing

@testable import RaxxVault

/// The keystore's direct JSON reader held to JSONDecoder on generated keystores: written as
/// `Keystore.save` writes them, written by hand (spaces, escapes, keys in any order, unknown keys,
/// nulls, fields missing or of the wrong kind) and damaged. Whatever the text, the direct reader
/// answers what JSONDecoder reads, or nothing (and the keystore is then read the general way).
@Suite struct KeystoreJSONTests {
    /// Keystore contents from one seed.
    struct Contents {
        var random: ModelRandom

        mutating func text() -> String { random.int(0...3) == 0 ? random.text(0...16) : random.pick(["", "t@example.com", "AAEC-_x", "acc_1", "raxx.app"]) }

        mutating func date() -> Date {
            let seconds = Double(random.int(-1_000...2_000_000_000))
            return Date(timeIntervalSince1970: random.bool() ? seconds : seconds + Double(random.int(1...999_999)) / 1_000_000)
        }

        mutating func unsigned() -> UInt64 { random.bool() ? UInt64(random.int(0...1 << 40)) : random.next() }

        mutating func credential() -> StoredCredential {
            StoredCredential(
                credentialID: text(), rpID: text(), userHandle: text(), email: text(), publicKey: text(),
                sealedPrivateKey: text(), pinSalt: text(), pinOpsLimit: unsigned(), pinMemLimit: unsigned(),
                signCount: UInt32(truncatingIfNeeded: unsigned()), failedPINAttempts: random.int(0...10), createdAt: date())
        }

        mutating func session() -> StoredSession {
            StoredSession(
                email: text(), accountID: text(), accessToken: text(), accessExpiresAt: date(), renewalToken: text(),
                sessionExpiresAt: date(), signedInAt: date(), accessIssuedAt: random.bool() ? date() : nil)
        }

        mutating func contents() -> KeystoreContents {
            var servers: [String: ServerCredentials] = [:]
            for _ in 0..<random.int(0...3) {
                let origin = random.pick(["https://api.raxx.app", "http://127.0.0.1:8080", "http://[::1]:9", random.text(0...10)])
                servers[origin] = ServerCredentials(credential: random.bool() ? credential() : nil, session: random.bool() ? session() : nil)
            }
            return KeystoreContents(servers: servers, unboundCredential: random.int(0...3) == 0 ? credential() : nil)
        }
    }

    /// JSON written by hand from a parsed tree: spaces where JSON allows them, escapes as a person
    /// or another encoder would write them, keys in any order, and now and then an unknown key, a
    /// null, a missing member or a value of another kind.
    struct Writer {
        var random: ModelRandom

        mutating func space() -> String { random.int(0...4) == 0 ? random.pick([" ", "\n  ", "\t", " \r\n"]) : "" }

        mutating func string(_ text: String) -> String { random.jsonString(text) }

        mutating func value(_ value: Any) -> String {
            switch value {
            case let object as [String: Any]: return self.object(object)
            case let text as String: return string(text)
            case let number as NSNumber:
                // Foundation writes every number its own way; these are JSON's.
                let written = "\(number)"
                return random.int(0...20) == 0 ? random.pick(["\"\(written)\"", "-0", "1e3", "2.0", "null", "true", "[]"]) : written
            default: return "null"
            }
        }

        mutating func object(_ object: [String: Any]) -> String {
            var members = object.map { ($0.key, $0.value) }
            for i in members.indices.reversed() { members.swapAt(i, random.int(0...i)) }
            if random.int(0...15) == 0, !members.isEmpty { members.remove(at: random.int(0...members.count - 1)) }
            if random.int(0...15) == 0, !members.isEmpty { members[random.int(0...members.count - 1)].1 = NSNull() }
            if random.int(0...10) == 0 { members.append((random.pick(["extra", "note", "servers2"]), random.pick(["1", "{}", "[1,2]"]) as String)) }
            if random.int(0...40) == 0, let twice = members.first { members.append(twice) }
            return "{" + space()
                + members.map { key, value in
                    string(key) + space() + ":" + space() + ((value as? String).flatMap { ["1", "{}", "[1,2]"].contains($0) ? $0 : nil } ?? self.value(value))
                }.joined(separator: space() + "," + space()) + space() + "}"
        }
    }

    static func general(_ bytes: [UInt8]) -> KeystoreContents? {
        try? Keystore.decoder.decode(KeystoreContents.self, from: Data(bytes))
    }

    @Test func savedKeystoresAreReadDirectlyAsJSONDecoderReadsThem() async throws {
        let direct = Mutex(0)
        await propertyCheck(count: 2_000, input: Gen.uint64()) { seed in
            var generator = Contents(random: ModelRandom(seed))
            let bytes = Array(try! Keystore.encoder.encode(generator.contents()))
            let read = KeystoreContents(directJSON: bytes)
            #expect(read == nil || read == Self.general(bytes), "\(String(decoding: bytes, as: UTF8.self))")
            if read != nil { direct.withLock { $0 += 1 } }
        }
        // Only a NUL in a text or an integer of 19 digits or more sends a saved keystore the general way.
        #expect(direct.withLock { $0 } >= 600, "\(direct.withLock { $0 }) of 2,000 read directly")
    }

    @Test func handWrittenKeystoresAreReadTheSameOrLeftToJSONDecoder() async throws {
        let direct = Mutex(0)
        await propertyCheck(count: 2_000, input: Gen.uint64()) { seed in
            var generator = Contents(random: ModelRandom(seed))
            let saved = try! Keystore.encoder.encode(generator.contents())
            let tree = try! JSONSerialization.jsonObject(with: saved) as! [String: Any]
            var writer = Writer(random: generator.random)
            let bytes = Array((writer.space() + writer.object(tree) + writer.space()).utf8)
            let read = KeystoreContents(directJSON: bytes)
            #expect(read == nil || read == Self.general(bytes), "\(String(decoding: bytes, as: UTF8.self))")
            if read != nil { direct.withLock { $0 += 1 } }
        }
        #expect(direct.withLock { $0 } >= 300, "\(direct.withLock { $0 }) of 2,000 read directly")
    }

    @Test func damagedKeystoresAreRefusedOrReadTheSame() async throws {
        await propertyCheck(count: 3_000, input: Gen.uint64()) { seed in
            var generator = Contents(random: ModelRandom(seed))
            let bytes = generator.random.damage(Array(try! Keystore.encoder.encode(generator.contents())))
            let read = KeystoreContents(directJSON: bytes)
            #expect(read == nil || read == Self.general(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    /// What a sign-in saves (a passkey and a session for a server whose origin has slashes, which
    /// JSONEncoder escapes) is read directly, and a version 1 keystore the general way.
    @Test func theUsualKeystoreIsReadDirectly() throws {
        let credential = StoredCredential(
            credentialID: "AAEC", rpID: "raxx.app", userHandle: "dXNlcg", email: "t@example.com",
            publicKey: "BP8", sealedPrivateKey: "c2VhbGVk", pinSalt: "c2FsdA", pinOpsLimit: 3,
            pinMemLimit: 268_435_456, signCount: 7, failedPINAttempts: 0,
            createdAt: Date(timeIntervalSince1970: 1_799_999_000.125))
        let contents = KeystoreContents(servers: [origin: ServerCredentials(credential: credential, session: sampleSession)])
        let bytes = Array(try Keystore.encoder.encode(contents))
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""https:\/\/api.raxx.app""#))
        #expect(KeystoreContents(directJSON: bytes) == contents)
        let version1 = Array(
            #"""
            {"credential":{"credentialID":"AAEC","rpID":"raxx.app","userHandle":"dXNlcg","email":"t@example.com","publicKey":"BP8",\#
            "sealedPrivateKey":"c2VhbGVk","pinSalt":"c2FsdA","pinOpsLimit":3,"pinMemLimit":268435456,"signCount":7,"failedPINAttempts":0,\#
            "createdAt":1799999000.125}}
            """#
            .utf8)
        #expect(KeystoreContents(directJSON: version1) == nil)
        #expect(Self.general(version1)?.unboundCredential == credential)
    }
}

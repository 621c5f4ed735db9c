import Foundation
import RaxxCore
import Testing

@testable import RaxxAge

/// Keys, encodings, and everything the decryptor must refuse.
@Suite struct AgeKeyTests {
    @Test func theSpecsExampleIdentityGivesItsRecipient() throws {
        let identity = try AgeX25519Identity("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
        #expect(identity.recipient.description == "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj")
        #expect(identity.secretKeyString == "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX")
    }

    @Test func aGeneratedKeyRoundTrips() throws {
        let identity = try AgeX25519Identity.generate()
        let recipient = try AgeX25519Recipient(identity.recipient.description)
        #expect(recipient == identity.recipient)
        #expect(recipient.description.hasPrefix("age1") && recipient.description.count == 62)
        let again = try AgeX25519Identity.parseFile("# a comment\n\n" + identity.keyFileContents)
        #expect(again.map(\.recipient) == [identity.recipient])
        #expect(identity.keyFileContents.contains("# public key: \(identity.recipient)"))
    }

    static let good = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"

    @Test(arguments: [
        ("", "empty"),
        ("ssh-ed25519 AAAAC3Nza", "starts with age1"),
        ("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX", "secret key, not a recipient"),
        (good.uppercased(), "lowercase"),
        ("age1Zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj", "mixes upper and lower case"),
        ("age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwb", "position 62"),
        ("age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwq", "checksum"),
        ("age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujw", "checksum"),
        ("age1zkvyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj", "checksum"),
        ("age1 zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj", "position 5"),
        ("age1qqqq", "too short"),
    ])
    func aBadRecipientIsBadInputSayingWhatIsWrong(text: String, says: String) {
        var caught: RaxxError?
        do { _ = try AgeX25519Recipient(text, field: "--encrypt-to") } catch { caught = error }
        #expect(caught?.status == .dataError)
        #expect(caught?.code == "bad_input")
        #expect(caught?.message.contains("field '--encrypt-to'") == true)
        #expect(caught?.message.contains(says) == true, "\(caught?.message ?? "no error")")
    }

    @Test func aRecipientOfTheWrongLengthOrTypeIsRefused() {
        let short = Bech32.encode(hrp: "age", bytes: [UInt8](repeating: 7, count: 31))
        let other = Bech32.encode(hrp: "age1pq", bytes: [UInt8](repeating: 7, count: 32))
        for (text, says) in [(short, "31 bytes"), (other, "Only X25519")] {
            var caught: RaxxError?
            do { _ = try AgeX25519Recipient(text) } catch { caught = error }
            #expect(caught?.status == .dataError)
            #expect(caught?.message.contains(says) == true, "\(caught?.message ?? "no error")")
        }
    }

    @Test func aBadIdentityNeverRepeatsTheKey() {
        let key = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEQ"
        var caught: RaxxError?
        do { _ = try AgeX25519Identity.parseFile("# key\n\(key)\n") } catch { caught = error }
        #expect(caught?.status == .dataError)
        #expect(caught?.message.contains("line 2") == true)
        #expect(caught?.message.contains("GFPYYSJZ") == false)
    }

    @Test func aPassphraseIsReadFromAFileDescriptorUpToItsLine() throws {
        func piped(_ text: [UInt8]) throws -> (passphrase: Result<AgePassphrase, RaxxError>, rest: [UInt8]) {
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer { close(fds[0]) }
            _ = text.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
            close(fds[1])
            let result: Result<AgePassphrase, RaxxError>
            do { result = .success(try AgePassphrase.read(fromFileDescriptor: fds[0], what: "--passphrase-fd 3")) } catch { result = .failure(error) }
            var rest = [UInt8](repeating: 0, count: 100)
            let n = read(fds[0], &rest, 100)
            return (result, Array(rest.prefix(max(n, 0))))
        }
        let (good, rest) = try piped(Array("open sesame\r\nnext line".utf8))
        let passphrase = try good.get()
        #expect(Array(passphrase.secret.readable) == Array("open sesame".utf8))
        #expect(rest == Array("next line".utf8), "nothing past the line is consumed")
        for bad in [Array("\n".utf8), [], [UInt8](repeating: 0x61, count: AgePassphrase.maximumLength + 1)] {
            var caught: RaxxError?
            if case .failure(let error) = try piped(bad).passphrase { caught = error }
            #expect(caught?.status == .dataError)
            #expect(caught?.message.contains("--passphrase-fd 3") == true)
        }
        #expect(throws: RaxxError.self) { try AgePassphrase.read(fromFileDescriptor: -1) }
    }

    @Test func base64IsCanonicalAndUnpadded() {
        #expect(RawBase64.decode(Array("AA".utf8)) == [0])
        #expect(RawBase64.decode(Array("AB".utf8)) == nil, "non-zero trailing bits")
        #expect(RawBase64.decode(Array("AA==".utf8)) == nil, "padding")
        #expect(RawBase64.decode(Array("A".utf8)) == nil)
        #expect(RawBase64.decode(Array("A-_A".utf8)) == nil, "base64url is another alphabet")
        for n in 0..<70 {
            let bytes = randomBytes(n)
            #expect(RawBase64.decode(Array(RawBase64.encode(bytes).utf8)) == bytes)
            #expect(RawBase64.encode(bytes) == Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: ""))
        }
    }

    @Test func aPassphraseIsWipedOnceUsed() throws {
        var bytes = Array("hunter22".utf8)
        let passphrase = try AgePassphrase(wiping: &bytes)
        #expect(bytes == [UInt8](repeating: 0, count: 8))
        _ = try AgeEncryptor(passphrase: passphrase, workFactor: 10, sink: AgeMemorySink())
        #expect(passphrase.secret.readable.allSatisfy { $0 == 0 })
        var reused: RaxxError?
        do { _ = try AgeEncryptor(passphrase: passphrase, workFactor: 10, sink: AgeMemorySink()) } catch { reused = error }
        #expect(reused?.code == "passphrase_spent")
        var empty: [UInt8] = []
        #expect(throws: RaxxError.self) { try AgePassphrase(wiping: &empty) }
    }
}

@Suite struct AgeStreamTests {
    /// Counts what reaches the sink.
    final class CountingSink: AgeSink {
        var count = 0
        var writes = 0
        func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError) { count += bytes.count; writes += 1 }
    }

    @Test func theEncryptorWritesEachChunkAsItFills() throws {
        let sink = CountingSink()
        let encryptor = try AgeEncryptor(recipients: [try AgeX25519Identity.generate().recipient], sink: sink)
        let headerLength = sink.count
        let piece = randomBytes(4096)
        var written = 0
        for _ in 0..<(16 << 20) / 4096 {
            try encryptor.write(contentsOf: piece)
            written += piece.count
            // Never more than one chunk of plaintext held back.
            let sealedPlaintext = (sink.count - headerLength) / AgeFormat.sealedChunkLength * AgeFormat.chunkLength
            if written - sealedPlaintext > AgeFormat.chunkLength {
                Issue.record("\(written - sealedPlaintext) bytes held back after \(written) written")
                break
            }
        }
        try encryptor.finish()
        #expect(sink.count == headerLength + (16 << 20) + 256 * 16, "256 chunks of 64 KiB, each with its tag")
        #expect(throws: RaxxError.self) { try encryptor.write(contentsOf: [1]) }
    }

    @Test func aPassphraseFileOpensWithThePassphraseAndRespectsTheWorkFactorLimit() throws {
        var bytes = Array("a long passphrase".utf8)
        let sink = AgeMemorySink()
        let encryptor = try AgeEncryptor(passphrase: try AgePassphrase(wiping: &bytes), workFactor: 10, sink: sink)
        try encryptor.write(contentsOf: Array("hello".utf8))
        try encryptor.finish()
        #expect(String(decoding: sink.bytes.prefix(60), as: UTF8.self).contains(" 10\n"))

        func open(_ text: String, limit: Int = 22) throws(RaxxError) -> [UInt8] {
            var bytes = Array(text.utf8)
            let out = AgeMemorySink()
            try AgeDecryptor.decrypt(from: AgeMemorySource(sink.bytes), to: out, passphrase: try AgePassphrase(wiping: &bytes), maximumWorkFactor: limit)
            return out.bytes
        }
        #expect(try open("a long passphrase") == Array("hello".utf8))
        #expect(throws: RaxxError.self) { try open("a long passphrase", limit: 9) }
        #expect(throws: RaxxError.self) { try open("a long passphrasf") }
        // A key cannot open a passphrase file, nor a passphrase a key's file.
        #expect(decryptionError(sink.bytes, with: [try AgeX25519Identity.generate()])?.code == "age_passphrase_file")
        let keyFile = try encrypt([1, 2, 3], to: [try AgeX25519Identity.generate().recipient])
        var other = Array("x".utf8)
        #expect(throws: RaxxError.self) {
            try AgeDecryptor.decrypt(from: AgeMemorySource(keyFile), to: AgeMemorySink(), passphrase: try AgePassphrase(wiping: &other))
        }
    }
}

/// Files changed after encryption: each is refused with a clear error, none crashes.
@Suite struct AgeTamperTests {
    let identity: AgeX25519Identity
    init() throws { identity = try AgeX25519Identity.generate() }

    /// Where the header ends (just past the MAC line's LF).
    func headerEnd(_ file: [UInt8]) -> Int {
        let marker = Array("\n--- ".utf8)
        let start = (0...(file.count - marker.count)).first { Array(file[$0..<($0 + marker.count)]) == marker }!
        return file[(start + 1)...].firstIndex(of: 0x0A)! + 1
    }

    func expectRefused(_ file: [UInt8], code: String? = nil, _ comment: Comment? = nil) {
        let error = decryptionError(file, with: [identity])
        #expect(error != nil, comment)
        #expect(error?.status == .dataError, comment)
        if let code { #expect(error?.code == code, "\(error?.message ?? "") \(comment?.rawValue ?? "")") }
    }

    @Test func aChangedByteAnywhereIsRefused() throws {
        let plaintext = randomBytes(150_000)  // three chunks: 64 KiB, 64 KiB, the rest
        let file = try encrypt(plaintext, to: [identity.recipient])
        expectSameBytes(try decrypt(file, with: [identity]), plaintext, "a round trip")
        let payload = headerEnd(file)
        var positions = [0, 5, 22, 30, payload - 10, payload - 2, payload, payload + 15, payload + 16, payload + 70_000, file.count - 1]
        positions += (0..<40).map { _ in Int.random(in: 0..<file.count) }
        for position in positions {
            var changed = file
            changed[position] ^= 1 << UInt8.random(in: 0..<8)
            expectRefused(changed, "byte \(position) of \(file.count) (header ends at \(payload))")
        }
        var payloadByte = file
        payloadByte[payload + 16 + 10] ^= 0x80
        expectRefused(payloadByte, code: "age_payload")
        var macByte = file
        macByte[payload - 3] = macByte[payload - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        expectRefused(macByte, code: "age_header_mac")
    }

    @Test func truncationReorderingAndTrailingDataAreRefused() throws {
        let file = try encrypt(randomBytes(150_000), to: [identity.recipient])
        let payload = headerEnd(file) + 16
        let chunk = AgeFormat.sealedChunkLength
        expectRefused(Array(file[..<(payload + 2 * chunk)]), code: "age_truncated", "cut after two whole chunks")
        expectRefused(Array(file[..<(payload + chunk)]), code: "age_truncated", "cut after one chunk")
        expectRefused(Array(file[..<payload]), code: "age_truncated", "no chunk at all")
        expectRefused(Array(file[..<(payload - 5)]), code: "age_truncated", "the nonce cut")
        expectRefused(Array(file[..<(payload + chunk + 100)]), "cut inside a chunk")
        expectRefused(Array(file[..<(headerEnd(file) - 10)]), code: "age_header", "cut in the header")
        let swapped =
            Array(file[..<payload]) + Array(file[(payload + chunk)..<(payload + 2 * chunk)])
            + Array(file[payload..<(payload + chunk)]) + Array(file[(payload + 2 * chunk)...])
        expectRefused(swapped, code: "age_payload", "chunks 1 and 2 swapped")
        expectRefused(file + [0], "a byte appended")

        let full = try encrypt(randomBytes(65_536), to: [identity.recipient])
        #expect(headerEnd(full) + 16 + chunk == full.count, "exactly 64 KiB is one full final chunk")
        expectRefused(full + randomBytes(40), code: "age_trailing_data", "data after a full final chunk")
    }

    /// A file assembled by hand with a known file key, to give chunks any flag.
    func craft(_ chunks: [(length: Int, final: Bool)]) -> [UInt8] {
        let fileKey = [UInt8](repeating: 0x5A, count: 16)
        var file: [UInt8] = fileKey.withUnsafeBytes { key in
            let stanza = try! AgeEncryptor.x25519Stanza(identity.recipient, fileKey: key)
            return Header(stanzas: [stanza]).encoded(fileKey: key)
        }
        let nonce = randomBytes(16)
        file += nonce
        let payloadKey = fileKey.withUnsafeBytes { Primitives.hkdf(key: $0, salt: nonce, info: "payload") }
        for (counter, chunk) in chunks.enumerated() {
            let plaintext = randomBytes(chunk.length)
            var sealed = [UInt8](repeating: 0, count: chunk.length + 16)
            payloadKey.withUnsafeBytes { key in
                AgeFormat.chunkNonce(counter: UInt64(counter), final: chunk.final).withUnsafeBytes { nonce in
                    plaintext.withUnsafeBytes { input in
                        sealed.withUnsafeMutableBytes { Primitives.seal(key: key, nonce: nonce, plaintext: input, into: $0) }
                    }
                }
            }
            file += sealed
        }
        return file
    }

    @Test func chunkFlagsAreEnforced() throws {
        let k = AgeFormat.chunkLength
        #expect(try decrypt(craft([(k, false), (10, true)]), with: [identity]).count == k + 10, "the crafting is right")
        #expect(try decrypt(craft([(0, true)]), with: [identity]).isEmpty, "an empty file is one empty final chunk")
        expectRefused(craft([(k, true), (10, true)]), code: "age_trailing_data", "a final flag on a chunk that is not last")
        expectRefused(craft([(k, true), (k, false), (10, true)]), code: "age_trailing_data")
        expectRefused(craft([(k, false), (0, true)]), code: "age_payload", "an empty final chunk after others")
        expectRefused(craft([(10, false)]), code: "age_truncated", "a short chunk without the final flag")
        expectRefused(craft([(k, false), (k, false)]), code: "age_truncated", "no final chunk")
        expectRefused(craft([]), code: "age_truncated", "no chunk")
    }

    @Test func headersThatAreNotAgeAreRefusedClearly() throws {
        let file = try encrypt(Array("data".utf8), to: [identity.recipient])
        let text = String(decoding: file[..<headerEnd(file)], as: UTF8.self)
        let cases: [(String, String)] = [
            ("", "age_header"),
            ("hello\n", "age_header"),
            ("age-encryption.org/v2\n", "age_header"),
            ("age-encryption.org/v1", "age_header"),
            ("age-encryption.org/v1\n--- AAAA\n", "age_header"),
            ("-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n-----END AGE ENCRYPTED FILE-----\n", "age_armored"),
            (text.replacingOccurrences(of: "-> X25519 ", with: "-> X25519  "), "age_header"),
            (text.replacingOccurrences(of: "-> X25519 ", with: "-> X25519 A"), "age_header"),
            (text.replacingOccurrences(of: "-> X25519", with: "-> other"), "age_no_identity"),
            (text.replacingOccurrences(of: "\n---", with: "\n-> extra stanza\n\n---"), "age_header_mac"),
            (
                text.replacingOccurrences(of: "\n---", with: "\n-> scrypt AAAAAAAAAAAAAAAAAAAAAA 10\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n---"),
                "age_passphrase_file"
            ),
            (text.replacingOccurrences(of: "\n", with: "\r\n"), "age_header"),
        ]
        for (header, code) in cases {
            expectRefused(Array(header.utf8) + Array(file[headerEnd(file)...]), code: code, "\(header.debugDescription)")
        }
        expectRefused([UInt8](repeating: 0x41, count: 2 << 20), code: "age_header", "a 2 MiB line")
    }

    @Test func randomInputNeverCrashesAndNeverDecrypts() throws {
        let file = try encrypt(randomBytes(1000), to: [identity.recipient])
        for _ in 0..<500 {
            var changed = file
            switch Int.random(in: 0..<4) {
            case 0: changed = Array(file[..<Int.random(in: 0..<file.count)])
            case 1:
                for _ in 0..<Int.random(in: 1...4) {
                    let i = Int.random(in: 0..<changed.count)
                    changed[i] ^= UInt8.random(in: 1...255)
                }
            case 2: changed.insert(UInt8.random(in: 0...255), at: Int.random(in: 0...changed.count))
            default: changed.remove(at: Int.random(in: 0..<changed.count))
            }
            expectRefused(changed)
        }
        for _ in 0..<200 { expectRefused(randomBytes(Int.random(in: 0..<3000))) }
    }
}

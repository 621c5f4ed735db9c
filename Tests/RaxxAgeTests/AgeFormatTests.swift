import Foundation
import RaxxCore
import Testing

@testable import RaxxAge

/// Recipients, passphrases and encodings.
@Suite struct AgeKeyTests {
    /// The age spec's example recipient (of the secret key AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZ…).
    static let good = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"

    @Test func aRecipientPrintsAsItIsWritten() throws {
        let recipient = try AgeX25519Recipient(Self.good)
        #expect(recipient.publicKey.count == 32)
        #expect(recipient.description == Self.good)
        #expect(try AgeX25519Recipient(recipient.description) == recipient)
    }

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

    @Test func base64IsUnpadded() {
        #expect(RawBase64.encode([0]) == "AA")
        for n in 0..<70 {
            let bytes = randomBytes(n)
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
        let encryptor = try AgeEncryptor(recipients: [try AgeX25519Recipient(AgeKeyTests.good)], sink: sink)
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
}

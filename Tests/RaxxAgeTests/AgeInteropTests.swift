import Foundation
import RaxxAge
import RaxxCore
import RaxxTestSupport
import Testing

/// What we write, the reference implementation opens byte for byte: Debian's `age -d`, with keys
/// made by `age-keygen` or with the passphrase typed at its prompt.
@Suite(.blocking) struct AgeInteropTests {
    /// Empty, one byte, one full chunk (64 KiB), a chunk and a byte, and many chunks and a part.
    static let sizes = [0, 1, 65_536, 65_537, 3 << 20 | 12_345]

    @Test(arguments: sizes)
    func ageDecryptsWhatWeEncryptToAKey(size: Int) throws {
        let tool = try AgeTool()
        let key = try tool.newKey()
        let recipient = try AgeX25519Recipient(key.recipient)
        #expect(recipient.description == key.recipient, "age-keygen's public key parses and prints back as written")
        let plaintext = randomBytes(size)
        try encryptToFile(plaintext, at: tool.path("export.age")) { sink in
            try AgeEncryptor(recipients: [recipient], sink: sink)
        }
        let file = Array(try Data(contentsOf: tool.path("export.age")))
        // The header, the nonce, then chunks of 64 KiB each with its tag: the last one is empty only
        // when the whole plaintext is.
        let chunks = max(1, (size + (64 << 10) - 1) / (64 << 10))
        #expect(headerEnd(file).map { $0 + 16 + size + chunks * 16 } == file.count, "\(chunks) chunks for \(size) bytes")
        expectSameBytes(try tool.decrypt(file: tool.path("export.age"), with: key), plaintext, "age decrypts \(size) bytes byte for byte")
    }

    @Test func ageDecryptsAFileForSeveralRecipientsWithEachKey() throws {
        let tool = try AgeTool()
        let first = try tool.newKey("first"), second = try tool.newKey("second")
        let plaintext = randomBytes(100_000)
        let file = try encrypt(plaintext, to: [try AgeX25519Recipient(first.recipient), try AgeX25519Recipient(second.recipient)])
        for key in [first, second] {
            expectSameBytes(try tool.decrypt(file, with: key), plaintext, "age decrypts the same 100,000 bytes with \(key.file.lastPathComponent)")
        }
        let other = try tool.newKey("other")
        #expect(throws: AgeTool.Failed.self, "a key it was not encrypted to opens nothing") { try tool.decrypt(file, with: other) }
    }

    @Test func ageDecryptsWhatWeEncryptWithAPassphrase() throws {
        let tool = try AgeTool()
        let plaintext = randomBytes(70_000)
        var secret = Array("correct horse battery staple".utf8)
        let passphrase = try AgePassphrase(wiping: &secret)
        #expect(secret.allSatisfy { $0 == 0 }, "the caller's bytes are wiped")
        try encryptToFile(plaintext, at: tool.path("p.age")) { sink in
            try AgeEncryptor(passphrase: passphrase, sink: sink)
        }
        let header = String(decoding: try Data(contentsOf: tool.path("p.age")).prefix(200), as: UTF8.self)
        #expect(header.contains("\n-> scrypt "), "a scrypt stanza")
        #expect(header.split(separator: "\n")[1].hasSuffix(" 18"), "age's default work factor")

        expectSameBytes(
            try tool.decrypt(file: tool.path("p.age"), passphrase: "correct horse battery staple"), plaintext,
            "age decrypts \(plaintext.count) bytes byte for byte")
        let wrong = try tool.runWithPassphrase("wrong horse", ["-d", "-o", tool.path("wrong").path, tool.path("p.age").path])
        #expect(wrong.status != 0, "age refuses the wrong passphrase")
    }

    /// The work factor asked is the one written, and age opens the file at it.
    @Test(arguments: [0, 65_536, 150_000])
    func ageDecryptsWhatWeEncryptWithAPassphraseAtALowWorkFactor(size: Int) throws {
        let tool = try AgeTool()
        let plaintext = randomBytes(size)
        var secret = Array("a long passphrase".utf8)
        let sink = AgeMemorySink()
        let encryptor = try AgeEncryptor(passphrase: try AgePassphrase(wiping: &secret), workFactor: 10, sink: sink)
        try encryptor.write(contentsOf: plaintext)
        try encryptor.finish()
        #expect(String(decoding: sink.bytes.prefix(60), as: UTF8.self).contains(" 10\n"))
        expectSameBytes(try tool.decrypt(sink.bytes, passphrase: "a long passphrase"), plaintext, "age decrypts \(size) bytes byte for byte")
        #expect(throws: AgeTool.Failed.self, "age refuses the wrong passphrase") { try tool.decrypt(sink.bytes, passphrase: "a long passphrasf") }
        #expect(throws: AgeTool.Failed.self, "nor opens it with a key") { try tool.decrypt(sink.bytes, with: try tool.newKey()) }
    }

    /// Without the reference tool the interop tests fail, saying how to install it; they never skip.
    @Test func aMissingToolFailsWithHowToGetIt() {
        var caught: Error?
        do { _ = try AgeTool.find("age-not-installed-here") } catch { caught = error }
        let message = (caught as? AgeTool.Missing)?.description ?? ""
        #expect(message.contains("`age-not-installed-here` is not installed"))
        #expect(message.contains("Scripts/bootstrap"))
    }
}

import Foundation
import RaxxAge
import RaxxCore
import RaxxTestSupport
import Testing

/// The format against the reference implementation, both ways: what we write, `age -d` opens
/// byte for byte; what `age` writes, we open.
@Suite(.blocking) struct AgeInteropTests {
    static let sizes = [0, 1, 65_536, 65_537, 3 << 20 | 12_345]

    @Test(arguments: sizes)
    func ageDecryptsWhatWeEncryptToAKey(size: Int) throws {
        let tool = try AgeTool()
        let scratch = try Scratch()
        let identity = try AgeX25519Identity.generate()
        try writePrivate(Array(identity.keyFileContents.utf8), to: scratch.path("key.txt"))
        let plaintext = randomBytes(size)
        try encryptToFile(plaintext, at: scratch.path("export.age")) { sink in
            try AgeEncryptor(recipients: [identity.recipient], sink: sink)
        }
        // To stdout: age creates an -o file only once it has something to write.
        let run = try AgeTool.run(tool.age, ["-d", "-i", scratch.path("key.txt").path, scratch.path("export.age").path])
        #expect(run.status == 0, "age -d failed: \(run.stderr)")
        expectSameBytes(run.stdout, plaintext, "age decrypts \(plaintext.count) bytes byte for byte")
    }

    @Test(arguments: sizes)
    func weDecryptWhatAgeEncryptsToAKey(size: Int) throws {
        let tool = try AgeTool()
        let scratch = try Scratch()
        let keygen = try AgeTool.run(tool.keygen, ["-o", scratch.path("key.txt").path])
        #expect(keygen.status == 0, "\(keygen.stderr)")
        let publicKey = try AgeTool.run(tool.keygen, ["-y", scratch.path("key.txt").path])
        let recipientText = String(decoding: publicKey.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let recipient = try AgeX25519Recipient(recipientText)
        #expect(recipient.description == recipientText)
        let identities = try AgeX25519Identity.parseFile(String(decoding: try readBytes(scratch.path("key.txt")), as: UTF8.self))
        #expect(identities.map(\.recipient) == [recipient], "our X25519 derives age-keygen's public key")

        let plaintext = randomBytes(size)
        try writePrivate(plaintext, to: scratch.path("in"))
        let run = try AgeTool.run(tool.age, ["-r", recipientText, "-o", scratch.path("in.age").path, scratch.path("in").path])
        #expect(run.status == 0, "age -r failed: \(run.stderr)")
        expectSameBytes(try decrypt(try readBytes(scratch.path("in.age")), with: identities), plaintext, "we decrypt \(plaintext.count) bytes byte for byte")
    }

    @Test func ageDecryptsAFileForSeveralRecipientsWithEachKey() throws {
        let tool = try AgeTool()
        let scratch = try Scratch()
        let first = try AgeX25519Identity.generate(), second = try AgeX25519Identity.generate()
        let plaintext = randomBytes(100_000)
        try writePrivate(try encrypt(plaintext, to: [first.recipient, second.recipient]), to: scratch.path("f.age"))
        for (name, identity) in [("first", first), ("second", second)] {
            try writePrivate(Array(identity.keyFileContents.utf8), to: scratch.path("\(name).txt"))
            let run = try AgeTool.run(tool.age, ["-d", "-i", scratch.path("\(name).txt").path, scratch.path("f.age").path])
            #expect(run.status == 0, "\(run.stderr)")
            expectSameBytes(run.stdout, plaintext, "age decrypts the same 100,000 bytes with each key")
        }
    }

    @Test func ageDecryptsWhatWeEncryptWithAPassphrase() throws {
        let tool = try AgeTool()
        let scratch = try Scratch()
        let plaintext = randomBytes(70_000)
        var secret = Array("correct horse battery staple".utf8)
        let passphrase = try AgePassphrase(wiping: &secret)
        #expect(secret.allSatisfy { $0 == 0 }, "the caller's bytes are wiped")
        try encryptToFile(plaintext, at: scratch.path("p.age")) { sink in
            try AgeEncryptor(passphrase: passphrase, sink: sink)
        }
        let header = String(decoding: try readBytes(scratch.path("p.age")).prefix(200), as: UTF8.self)
        #expect(header.contains("\n-> scrypt "), "a scrypt stanza")
        #expect(header.split(separator: "\n")[1].hasSuffix(" 18"), "age's default work factor")

        let run = try tool.runWithPassphrase(
            "correct horse battery staple", ["-d", "-o", scratch.path("out").path, scratch.path("p.age").path], in: scratch.url)
        #expect(run.status == 0, "age -d with the passphrase failed: \(run.stderr)")
        expectSameBytes(try readBytes(scratch.path("out")), plaintext, "age decrypts \(plaintext.count) bytes byte for byte")

        let wrong = try tool.runWithPassphrase("wrong horse", ["-d", "-o", scratch.path("wrong").path, scratch.path("p.age").path], in: scratch.url)
        #expect(wrong.status != 0, "age refuses the wrong passphrase")
    }

    @Test func weDecryptWhatAgeEncryptsWithAPassphrase() throws {
        let tool = try AgeTool()
        let scratch = try Scratch()
        let plaintext = randomBytes(200_000)
        try writePrivate(plaintext, to: scratch.path("in"))
        let run = try tool.runWithPassphrase("tr0ub4dor & 3", ["-p", "-o", scratch.path("in.age").path, scratch.path("in").path], in: scratch.url)
        #expect(run.status == 0, "age -p failed: \(run.stderr)")
        let file = try readBytes(scratch.path("in.age"))

        let sink = AgeMemorySink()
        try AgeDecryptor.decrypt(from: AgeMemorySource(file), to: sink, passphrase: try passphrase("tr0ub4dor & 3"))
        expectSameBytes(sink.bytes, plaintext, "we decrypt what age -p wrote")

        var refused: RaxxError?
        do {
            try AgeDecryptor.decrypt(from: AgeMemorySource(file), to: AgeMemorySink(), passphrase: try passphrase("tr0ub4dor & 4"))
        } catch {
            refused = error as? RaxxError
        }
        #expect(refused?.code == "age_wrong_passphrase")
        #expect(refused?.status == .dataError)
    }

    /// Without the reference tool the interop tests fail, saying how to install it; they never skip.
    @Test func aMissingToolFailsWithHowToGetIt() {
        var caught: Error?
        do { _ = try AgeTool.find("age-not-installed-here") } catch { caught = error }
        let message = (caught as? AgeTool.Missing)?.description ?? ""
        #expect(message.contains("`age-not-installed-here` is not installed"))
        #expect(message.contains("Scripts/bootstrap"))
    }

    func passphrase(_ text: String) throws -> AgePassphrase {
        var bytes = Array(text.utf8)
        return try AgePassphrase(wiping: &bytes)
    }
}

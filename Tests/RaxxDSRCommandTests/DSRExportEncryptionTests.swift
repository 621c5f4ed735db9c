import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxDSR
import RaxxDSRCommand
import RaxxTestSupport
import Testing

/// Encrypted exports, opened as the requester opens them: by Debian's `age -d` (Scripts/bootstrap
/// installs it), with a key from `age-keygen` or the passphrase typed at its prompt. The export's
/// world is `DSRExportVerbTests`'; these run `age`, so on the blocking lanes.
@Suite(.blocking) struct DSRExportEncryptionTests {
    let verbs = DSRExportVerbTests()
    var files: MemoryDSRFiles { verbs.files }
    func world() -> TestWorld { verbs.world() }

    /// The export document as the verb writes it unencrypted.
    static func document() throws -> [UInt8] { Array(try ExportDocument.bytes(try DSRExportVerbTests.export())) }

    @Test func encryptsToAnAgeRecipient() async throws {
        let age = try AgeTool()
        let key = try age.newKey()
        let world = world()
        world.api.onExportDSRData { _ in .ok(.init(body: .json(try DSRExportVerbTests.export()))) }
        world.api.onConfirmDSRExport { _ in .ok(.init(body: .json(DSRFixtures.request(status: .completed)))) }
        #expect(try await world.run(RaxxDSR.Export.self, ["dsr_1", "--out", "/tmp/e.age", "--encrypt-to", key.recipient]) == .ok)
        let sealed = try #require(files.written["/tmp/e.age"])
        #expect(String(decoding: sealed.prefix(21), as: UTF8.self) == "age-encryption.org/v1")
        #expect(try age.decrypt(sealed, with: key) == (try Self.document()))
        #expect(world.jsonLines.first?["encryption"] as? String == "age-x25519")
    }

    @Test func encryptsWithAPassphraseFromAFileDescriptor() async throws {
        let age = try AgeTool()
        let world = world()
        files.descriptors[3] = "correct horse battery staple"
        world.api.onExportDSRData { _ in .ok(.init(body: .json(try DSRExportVerbTests.export()))) }
        world.api.onConfirmDSRExport { _ in .ok(.init(body: .json(DSRFixtures.request(status: .completed)))) }
        #expect(try await world.run(RaxxDSR.Export.self, ["dsr_1", "--out", "/tmp/p.age", "--passphrase-fd", "3"]) == .ok)
        let sealed = try #require(files.written["/tmp/p.age"])
        #expect(try age.decrypt(sealed, passphrase: "correct horse battery staple") == (try Self.document()))
    }

    /// `--passphrase`: asked on the terminal with its rule first; too short, nothing is sent.
    @Test func encryptsWithAPassphraseAskedOnTheTerminal() async throws {
        let age = try AgeTool()
        let world = world()
        files.typed = "correct horse battery staple"
        world.api.onExportDSRData { _ in .ok(.init(body: .json(try DSRExportVerbTests.export()))) }
        world.api.onConfirmDSRExport { _ in .ok(.init(body: .json(DSRFixtures.request(status: .completed)))) }
        #expect(try await world.run(RaxxDSR.Export.self, ["dsr_1", "--out", "/tmp/t.age", "--passphrase"]) == .ok)
        #expect(files.prompts == ["Passphrase for the export (at least 12 characters; the requester opens it with age -d): "])
        let sealed = try #require(files.written["/tmp/t.age"])
        #expect(try age.decrypt(sealed, passphrase: "correct horse battery staple") == (try Self.document()))
        #expect(world.jsonLines.first?["encryption"] as? String == "age-scrypt")

        let short = self.world()
        files.typed = "too short"
        #expect(try await short.run(RaxxDSR.Export.self, ["dsr_1", "--out", "/tmp/u.age", "--passphrase"]) == .dataError)
        #expect(short.api.calls.isEmpty)
        #expect(files.written["/tmp/u.age"] == nil)
        for both in [["--passphrase", "--passphrase-fd", "3"], ["--passphrase", "--encrypt-to", "age1x"]] {
            #expect(throws: (any Error).self) { _ = try RaxxDSR.Export.parse(["dsr_1", "--out", "/tmp/v.age"] + both) }
        }
    }
}

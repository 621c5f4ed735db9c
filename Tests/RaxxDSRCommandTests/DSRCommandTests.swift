import Crypto
import Foundation
import RaxxAPI
import RaxxAge
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDSR
import RaxxDSRCommand
import RaxxDomain
import RaxxTestSupport
import RaxxWire
import Testing

/// The DSR files in memory: what an export wrote, the receipt files a test gives, the kept key.
final class MemoryDSRFiles: DSRFiles, @unchecked Sendable {
    private let lock = NSLock()
    var written: [String: Data] = [:]
    var files: [String: Data] = [:]
    var key: KeptReceiptKey?

    func writeNew(path: String, data: Data) throws(RaxxError) {
        lock.lock()
        defer { lock.unlock() }
        guard written[path] == nil, files[path] == nil else {
            throw RaxxError(code: .exportUnwritable, message: "Could not create \(path): it exists already.")
        }
        written[path] = data
    }

    func read(path: String, limit: Int) throws(RaxxError) -> Data {
        guard let data = lock.withLock({ files[path] }) else { throw RaxxError.badInput(field: "file", "cannot open \(path)") }
        return data
    }

    func keptReceiptKey(origin: String) throws(RaxxError) -> KeptReceiptKey? { lock.withLock { key?.origin == origin ? key : nil } }
    func keep(_ key: KeptReceiptKey) throws(RaxxError) { lock.withLock { self.key = key } }

    /// What the test "wrote" on each file descriptor.
    var descriptors: [Int32: String] = [:]
    func passphrase(fd: Int32) throws(RaxxError) -> AgePassphrase {
        guard let text = lock.withLock({ descriptors[fd] }) else { throw RaxxError.usage("Nothing on file descriptor \(fd).") }
        var bytes = Array(text.utf8)
        return try AgePassphrase(wiping: &bytes)
    }

    /// What the test "types" at the terminal's passphrase prompt, and the prompts shown.
    var typed: String?
    var prompts: [String] = []
    func askPassphrase(prompt: String) throws(RaxxError) -> AgePassphrase {
        guard
            let text = lock.withLock({
                prompts.append(prompt); return typed
            })
        else {
            throw RaxxError.usage("A passphrase is needed, and there is no terminal to ask for it.")
        }
        var bytes = Array(text.utf8)
        return try AgePassphrase(wiping: &bytes)
    }
}

/// Plan hashes as the server makes them (hex SHA-256): an older plan's and the latest.
private let PH = String(repeating: "ab", count: 32)
private let OLD = String(repeating: "0", count: 64)
private let NEW = String(repeating: "f", count: 64)

enum DSRFixtures {
    static func request(
        id: String = "dsr_1", kind: Components.Schemas.DSRKind = .access, status: Components.Schemas.DSRStatus = .identityUnverified,
        due: String = "2026-12-21", overdue: Bool = false, planHash: String? = nil
    ) -> Components.Schemas.DSRRequest {
        .init(
            id: id, kind: kind, subject: "subject@example.com", ticket: "T-1", status: status, receivedAt: Fixtures.now, dueOn: due,
            extended: false, overdue: overdue, openedBy: "staff@example.com", planHash: planHash, createdAt: Fixtures.now, updatedAt: Fixtures.now)
    }

    static func staffOnly() -> Components.Responses.Problem { Fixtures.problem(403, code: "staff_only", title: "Staff only.") }

    /// A receipt signed with `key`.
    static func receipt(_ key: Curve25519.Signing.PrivateKey) throws -> Components.Schemas.DSRReceipt {
        let body = Components.Schemas.DSRReceiptBody(
            requestId: "dsr_1", subjectHash: "hmac-sha256:ab", planHash: PH,
            items: [.init(table: "fills", action: .delete, rows: 12)], completedAt: "2026-11-21T10:00:00Z")
        let signature = try key.signature(for: CanonicalJSON.data(body))
        return .init(receipt: body, algorithm: .ed25519, keyId: keyID(key), signature: Base64URL.encode(signature))
    }

    static func keyID(_ key: Curve25519.Signing.PrivateKey) -> String {
        String(Base64URL.encode(SHA256.hash(data: key.publicKey.rawRepresentation)).prefix(16))
    }

    static func served(_ key: Curve25519.Signing.PrivateKey) -> Components.Schemas.DSRReceiptKey {
        .init(algorithm: .ed25519, keyId: keyID(key), publicKey: Base64URL.encode(key.publicKey.rawRepresentation))
    }
}

@Suite struct DSRRequestVerbTests {
    let files = MemoryDSRFiles()

    func world() -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.services = [Provided(files, as: (any DSRFiles).self)]
        return world
    }

    @Test func openSendsTheRequestAsReceived() async throws {
        let world = world()
        world.api.onCreateDSRRequest { input in
            guard case .json(let body) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            #expect(body.email == "subject@example.com" && body.kind == .erasure && body.ticket == "T-1")
            #expect(body.receivedAt.map(RFC3339.string(from:)) == "2026-01-31T12:00:00Z")
            return .created(.init(body: .json(DSRFixtures.request(kind: .erasure, due: "2026-02-28"))))
        }
        #expect(
            try await world.run(
                RaxxDSR.Open.self,
                [
                    "--email", "Subject@Example.com", "--kind", "erasure", "--ticket", "T-1",
                    "--received-at", "2026-01-31",
                ]) == .ok)
        #expect(world.jsonLines.first?["due_on"] as? String == "2026-02-28")
    }

    @Test(arguments: [
        (["--email", "not-an-email", "--kind", "access", "--ticket", "T"], "field 'email'"),
        (["--email", "a@b.co", "--kind", "access", "--ticket", "T", "--received-at", "2026-02-30"], "field 'received-at'"),
        (["--email", "a@b.co", "--kind", "access", "--ticket", "T", "--received-at", "2099-01-01"], "field 'received-at'"),
    ])
    func openRefusesBadInputAndSendsNothing(arguments: [String], field: String) async throws {
        let world = world()
        #expect(try await world.run(RaxxDSR.Open.self, arguments + ["--format", "text"]) == .dataError)
        #expect(world.stderr.contents.contains(field))
        #expect(world.api.calls.isEmpty)
    }

    @Test func aNonStaffSessionExits77StaffOnly() async throws {
        let world = world()
        world.api.onCreateDSRRequest { _ in .default(statusCode: 403, DSRFixtures.staffOnly()) }
        #expect(try await world.run(RaxxDSR.Open.self, ["--email", "a@b.co", "--kind", "access", "--ticket", "T", "--format", "text"]) == .notPermitted)
        #expect(world.stderr.contents.contains("Staff only"))
    }

    @Test func offlineExits69() async throws {
        let world = world()
        world.api.onListDSRRequests { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused") }
        #expect(try await world.run(RaxxDSR.List.self, ["--format", "text"]) == .unavailable)
        #expect(world.stderr.contents.contains(RaxxError.offlineMessage))
        #expect(world.stdout.contents.isEmpty)
    }

    @Test func notSignedInExits4AndSendsNothing() async throws {
        let world = world()
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxDSR.Show.self, ["dsr_1"]) == .signInRequired)
        #expect(world.api.calls.isEmpty)
    }

    @Test func verifyExtendShowCancelAndRefuse() async throws {
        let world = world()
        world.api.onVerifyDSRIdentity { input in
            guard case .json(let body) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            #expect(body.method == "reply from the account's email")
            return .ok(.init(body: .json(DSRFixtures.request(status: .verified))))
        }
        world.api.onExtendDSRRequest { _ in
            .default(
                statusCode: 409,
                Fixtures.problem(
                    409, code: "extension_refused", title: "The request cannot be extended.",
                    detail: "The request was extended already; it can be extended only once."))
        }
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(status: .verified)))) }
        world.api.onCloseDSRRequest { input in
            guard case .json(let body) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            return .ok(.init(body: .json(DSRFixtures.request(status: body.status == .refused ? .refused : .cancelled))))
        }
        #expect(try await world.run(RaxxDSR.VerifyIdentity.self, ["dsr_1", "--method", "reply from the account's email"]) == .ok)
        #expect(world.jsonLines.last?["status"] as? String == "verified")
        #expect(try await world.run(RaxxDSR.Extend.self, ["dsr_1", "--reason", "complex", "--format", "text"]) == .failure)
        #expect(world.stderr.contents.contains("only once"))
        #expect(try await world.run(RaxxDSR.Show.self, ["dsr_1"]) == .ok)
        #expect(try await world.run(RaxxDSR.Cancel.self, ["dsr_1", "--reason", "withdrawn"]) == .ok)
        #expect(world.jsonLines.last?["status"] as? String == "cancelled")
        #expect(try await world.run(RaxxDSR.Refuse.self, ["dsr_1", "--reason", "excessive"]) == .ok)
        #expect(world.jsonLines.last?["status"] as? String == "refused")
        #expect(try await world.run(RaxxDSR.Cancel.self, ["dsr_1", "--reason", " "]) == .dataError)
    }

    @Test func listFiltersByDueDateAndOverdueExits1() async throws {
        let world = world()
        world.api.onListDSRRequests { _ in
            .ok(
                .init(
                    body: .json(
                        .init(requests: [
                            DSRFixtures.request(id: "late", due: "2026-11-20", overdue: true),
                            DSRFixtures.request(id: "soon", due: "2026-11-25"),
                            DSRFixtures.request(id: "later", due: "2026-12-21"),
                            DSRFixtures.request(id: "done", status: .completed, due: "2026-11-22"),
                        ]))))
        }
        #expect(try await world.run(RaxxDSR.List.self, ["--due-within", "7d"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["id"] as? String } == ["late", "soon"])
        let before = world.jsonLines.count
        #expect(try await world.run(RaxxDSR.List.self, ["--overdue", "--json"]) == .failure)
        #expect(world.jsonLines.dropFirst(before).compactMap { $0["id"] as? String } == ["late"])
    }

    @Test func overdueWithNoneExits0() async throws {
        let world = world()
        world.api.onListDSRRequests { _ in .ok(.init(body: .json(.init(requests: [DSRFixtures.request(id: "later")])))) }
        #expect(try await world.run(RaxxDSR.List.self, ["--overdue"]) == .ok)
        #expect(world.stdout.contents.isEmpty)
    }
}

@Suite struct DSRExportVerbTests {
    let files = MemoryDSRFiles()

    func world() -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.services = [Provided(files, as: (any DSRFiles).self)]
        return world
    }

    static func export(tamper: Bool = false) throws -> Components.Schemas.DSRExport {
        let rows = [
            try Components.Schemas.DSRExport.TablesPayload.AdditionalPropertiesPayloadPayload(
                additionalProperties: .init(unvalidatedValue: ["id": "ord_1", "qty": 10, "symbol": "AAPL"]))
        ]
        let sha = SHA256.hash(data: try CanonicalJSON.data(rows)).map { String(format: "%02x", $0) }.joined()
        return .init(
            manifest: .init(
                requestId: "dsr_1", subject: "subject@example.com", generatedAt: "2026-11-21T10:00:00Z",
                tables: [.init(table: "orders", rows: tamper ? 2 : 1, sha256: sha)]),
            tables: .init(additionalProperties: ["orders": rows]))
    }

    @Test func writesTheCheckedDocumentToANewFile() async throws {
        let world = world()
        world.api.onExportDSRData { _ in .ok(.init(body: .json(try Self.export()))) }
        world.api.onConfirmDSRExport { _ in .ok(.init(body: .json(DSRFixtures.request(status: .completed)))) }
        #expect(try await world.run(RaxxDSR.Export.self, ["dsr_1", "--out", "/tmp/x.json"]) == .ok)
        let written = try #require(files.written["/tmp/x.json"])
        let document = try #require(try JSONSerialization.jsonObject(with: written) as? [String: Any])
        #expect(((document["tables"] as? [String: Any])?["orders"] as? [[String: Any]])?.first?["id"] as? String == "ord_1")
        #expect(world.jsonLines.first?["rows"] as? Int == 1)
        #expect(world.api.operations.filter { $0 == "confirmDSRExport" }.count == 1)
        // Never over an existing file, and then the request is not completed.
        #expect(try await world.run(RaxxDSR.Export.self, ["dsr_1", "--out", "/tmp/x.json", "--format", "text"]) == .failure)
        #expect(world.api.operations.filter { $0 == "confirmDSRExport" }.count == 1)
        #expect(world.stderr.contents.contains("dsr_1 is not completed: export it again."))
        #expect(world.stderr.contents.contains("exists already"))
    }

    @Test func refusesATerminalStdoutBeforeSendingAnything() async throws {
        let world = world()
        world.stdoutIsTTY = true
        #expect(try await world.run(RaxxDSR.Export.self, ["dsr_1"]) == .usage)
        #expect(world.stderr.contents.contains("terminal"))
        #expect(world.api.calls.isEmpty)
    }

    @Test func aDocumentNotMatchingItsManifestIsNotWritten() async throws {
        let world = world()
        world.api.onExportDSRData { _ in .ok(.init(body: .json(try Self.export(tamper: true)))) }
        #expect(try await world.run(RaxxDSR.Export.self, ["dsr_1", "--out", "/tmp/y.json"]) == .failure)
        #expect(files.written.isEmpty)
    }

    @Test func aShortPassphraseIsRefusedBeforeAnythingIsSent() async throws {
        for (typed, status) in [("x", ExitStatus.dataError), ("elevenchars", .dataError), ("twelve chars", .ok), ("ééééééééééé", .dataError)] {
            let world = world()
            files.descriptors[3] = typed
            world.api.onExportDSRData { _ in .ok(.init(body: .json(try Self.export()))) }
            world.api.onConfirmDSRExport { _ in .ok(.init(body: .json(DSRFixtures.request(status: .completed)))) }
            #expect(
                try await world.run(RaxxDSR.Export.self, ["dsr_1", "--out", "/tmp/s.age", "--passphrase-fd", "3", "--format", "text"]) == status,
                "\(typed)")
            if status != .ok {
                #expect(world.api.calls.isEmpty, "\(typed)")
                #expect(world.stderr.contents.contains("at least 12 characters"), "\(typed)")
            }
        }
    }

    @Test func aBadRecipientOrBothKindsSendNothing() async throws {
        let world = world()
        #expect(
            try await world.run(RaxxDSR.Export.self, ["dsr_1", "--out", "/tmp/b.age", "--encrypt-to", "age1nope", "--format", "text"])
                == .dataError)
        #expect(world.stderr.contents.contains("encrypt-to"))
        #expect(world.api.calls.isEmpty)
        await #expect(throws: (any Error).self) {
            _ = try RaxxDSR.Export.parse(["dsr_1", "--encrypt-to", "age1x", "--passphrase-fd", "3"])
        }
    }

    @Test func writesToAPipe() async throws {
        let world = world()
        world.api.onExportDSRData { _ in .ok(.init(body: .json(try Self.export()))) }
        world.api.onConfirmDSRExport { _ in .ok(.init(body: .json(DSRFixtures.request(status: .completed)))) }
        #expect(try await world.run(RaxxDSR.Export.self, ["dsr_1"]) == .ok)
        #expect(world.stdout.contents.hasPrefix("{\"manifest\""))
    }
}

@Suite struct DSRErasureVerbTests {
    let files = MemoryDSRFiles()

    func world() -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.services = [Provided(files, as: (any DSRFiles).self)]
        return world
    }

    @Test func planPrintsItemsAndTheHash() async throws {
        let world = world()
        world.api.onPlanDSRErasure { _ in
            .ok(
                .init(
                    body: .json(
                        .init(
                            requestId: "dsr_1", planHash: PH,
                            items: [
                                .init(table: "fills", what: "paper-trading fills", rows: 3, action: .delete, ground: "Art. 17(1)", retention: "none")
                            ], computedAt: Fixtures.now))))
        }
        #expect(try await world.run(RaxxDSR.Plan.self, ["dsr_1"]) == .ok)
        #expect(world.jsonLines.first?["plan_hash"] as? String == PH)
        #expect(try await world.run(RaxxDSR.Plan.self, ["dsr_1", "--format", "text"]) == .ok)
        #expect(world.stdout.contents.contains("plan_hash \(PH)"))
    }

    /// The server says what is wrong; the tool adds the command that fixes it.
    @Test func anUnverifiedRequestNamesTheCommandThatVerifiesIt() async throws {
        let world = world()
        world.api.onPlanDSRErasure { _ in
            .default(statusCode: 409, Fixtures.problem(409, code: "identity_unverified", title: "Verify the requester's identity first."))
        }
        #expect(try await world.run(RaxxDSR.Plan.self, ["dsr_1", "--format", "text"]) == .failure)
        #expect(
            world.stderr.contents == """
                raxx-dsr: Verify the requester's identity first: raxx-dsr verify-identity ID --method TEXT
                hint: TEXT says how it was verified (a reply from the account's email, say).

                """, "\(world.stderr.contents)")
    }

    @Test func applyWithoutATerminalNeedsConfirm() async throws {
        let world = world()
        #expect(try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH]) == .usage)
        #expect(world.api.calls.isEmpty)
    }

    /// The plan as the server would make it now, with `hash`.
    static func currentPlan(_ hash: String) -> @Sendable (Operations.CheckDSRErasurePlan.Input) -> Operations.CheckDSRErasurePlan.Output {
        { _ in .ok(.init(body: .json(.init(requestId: "dsr_1", planHash: hash, items: [], computedAt: Fixtures.now)))) }
    }

    @Test func aWrongConfirmationErasesNothing() async throws {
        let world = world()
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .planned, planHash: PH)))) }
        world.api.onCheckDSRErasurePlan(Self.currentPlan(PH))
        #expect(try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH, "--confirm", "other@example.com"]) == .dataError)
        #expect(world.api.operations == [Operations.GetDSRRequest.id, Operations.CheckDSRErasurePlan.id])
    }

    @Test func aMistypedEmailOnTheTerminalCancels() async throws {
        let world = world()
        world.stdinIsTTY = true
        world.stdin = "someone@example.com\n"
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .planned, planHash: PH)))) }
        world.api.onCheckDSRErasurePlan(Self.currentPlan(PH))
        #expect(try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH]) == .cancelled)
        #expect(world.api.operations == [Operations.GetDSRRequest.id, Operations.CheckDSRErasurePlan.id])
    }

    /// A mistyped hash is a usage error (64), not a stale plan to retry (75); nothing is asked.
    @Test func aMalformedPlanHashIsAUsageError() async throws {
        let world = world()
        #expect(try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", "deadbeef", "--confirm", "subject@example.com"]) == .usage)
        #expect(world.stderr.contents.contains("--plan-hash takes the 64 hex characters"))
        #expect(world.api.calls.isEmpty)
        // The same hash in capitals is the same hash: on to the confirmation (wrong here: 65).
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .planned, planHash: PH)))) }
        world.api.onCheckDSRErasurePlan(Self.currentPlan(PH))
        #expect(try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH.uppercased(), "--confirm", "other@example.com"]) == .dataError)
    }

    /// A hash that is not the request's plan (mistyped, or a plan replaced since) is said to be
    /// so (65), not "stale"; nothing is asked.
    @Test func aHashThatIsNotThePlansIsSaidToBeSo() async throws {
        let world = world()
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .planned, planHash: NEW)))) }
        #expect(
            try await world.run(
                RaxxDSR.Apply.self,
                [
                    "dsr_1", "--plan-hash", OLD, "--confirm", "subject@example.com",
                    "--format", "text",
                ]) == .dataError)
        #expect(world.stderr.contents.contains("field 'plan-hash': is not this plan's hash"))
        #expect(!world.stderr.contents.contains("stale"))
        #expect(world.api.operations == [Operations.GetDSRRequest.id])
    }

    /// The plan's freshness is checked before the email and the PIN are asked: data that changed
    /// since makes it stale (75), and the hint names the request to plan again.
    @Test func aStalePlanIsFoundBeforeTheEmailAndPINAreAsked() async throws {
        let world = world()
        world.stdinIsTTY = true
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .planned, planHash: PH)))) }
        world.api.onCheckDSRErasurePlan(Self.currentPlan(NEW))
        #expect(try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH, "--format", "text"]) == .temporary)
        #expect(world.stderr.contents.contains("The plan is stale: dsr_1's data changed since it was planned"))
        #expect(world.stderr.contents.contains("hint: Plan again: raxx-dsr plan dsr_1"))
        #expect(!world.stderr.contents.contains("Type the subject's email"))
        #expect(world.api.operations == [Operations.GetDSRRequest.id, Operations.CheckDSRErasurePlan.id])
    }

    /// Ctrl-C at the email prompt, at the PIN or during the step-up: nothing was sent to erase, and
    /// the person hears where the request stands and how to finish it (before, it died silently).
    @Test func ctrlCBeforeTheErasureSaysWhereTheRequestStands() async throws {
        let world = world()
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .planned, planHash: PH)))) }
        world.api.onCheckDSRErasurePlan(Self.currentPlan(PH))
        world.api.onStepUpOptions { _ in
            world.interrupt()
            throw RaxxError.cancelled  // the process has ended by now; the stub stops the command as well
        }
        _ = try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH, "--confirm", "subject@example.com", "--format", "text"])
        #expect(world.ended == [ExitStatus.cancelled.rawValue])
        #expect(
            world.stderr.contents.contains("raxx-dsr: Stopped before erasing anything: dsr_1 is still planned, its plan unchanged."),
            "\(world.stderr.contents)")
        #expect(world.stderr.contents.contains("hint: Apply again to finish it: raxx-dsr apply dsr_1 --plan-hash \(PH)"))
        #expect(!world.api.operations.contains(Operations.ApplyDSRErasure.id))

        // Ctrl-D at the prompt says the same.
        let closed = self.world()
        closed.stdinIsTTY = true
        closed.stdin = ""
        closed.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .erasing, planHash: PH)))) }
        #expect(try await closed.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH, "--format", "text"]) == .cancelled)
        #expect(closed.stderr.contents.contains("dsr_1 is still erasing, stopped part-way where it was."), "\(closed.stderr.contents)")
    }

    /// An apply stopped while the server erases (Ctrl-C, a lost connection) says what state the
    /// request is in and how to finish it.
    @Test func anInterruptedApplySaysHowToFinish() async throws {
        let stopped = world()
        stopped.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .completed, planHash: PH)))) }
        stopped.api.onApplyDSRErasure { _ in
            stopped.interrupt()
            // The erasure goes on: no answer comes, until the wait is cancelled.
            let (never, open) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            open.finish()
            throw CancellationError()
        }
        #expect(
            try await stopped.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH, "--confirm", "subject@example.com", "--format", "text"])
                == .cancelled)
        #expect(stopped.stderr.contents.contains("Stopped waiting for the erasure of dsr_1. On the server the erasure goes on"))
        #expect(stopped.stderr.contents.contains("hint: Apply again to finish it: raxx-dsr apply dsr_1 --plan-hash \(PH)"))

        let lost = world()
        lost.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .completed, planHash: PH)))) }
        lost.api.onApplyDSRErasure { _ in throw TransportFailure(kind: .offlineSoft, curlCode: 28, detail: "timed out") }
        #expect(
            try await lost.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH, "--confirm", "subject@example.com", "--format", "text"])
                == .unavailable)
        #expect(lost.stderr.contents.contains("The connection was lost while dsr_1 was being erased"))
    }

    @Test func theServersStaleAnswerExits75() async throws {
        #expect(ErrorMapping.raxxError(problem: .init(title: "The plan is stale.", status: 409, code: "plan_stale")).status == .temporary)
    }

    @Test func applyingACompletedRequestIsANoOpWithoutAStepUp() async throws {
        let world = world()
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .completed, planHash: PH)))) }
        world.api.onApplyDSRErasure { input in
            #expect(input.headers.raxxStepUpGrant == nil)
            return .ok(.init(body: .json(.init(request: DSRFixtures.request(kind: .erasure, status: .completed, planHash: PH), alreadyCompleted: true))))
        }
        #expect(try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH, "--confirm", "subject@example.com"]) == .ok)
        #expect(world.jsonLines.first?["already_completed"] as? Bool == true)
        #expect(world.stderr.contents.contains("nothing changed"))
    }

    @Test func applyWaitsForTheErasureFarLongerThanAnOrdinaryCall() async throws {
        // Found by the release bench: the apply call timed out after RAXX_TIMEOUT (120 s) while
        // the sandbox was erasing 1,000,000 fills, and the command reported being offline.
        let world = world()
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .completed, planHash: PH)))) }
        final class Seen: @unchecked Sendable { let lock = NSLock(); var timeout: RaxxDuration? }
        let seen = Seen()
        world.api.onApplyDSRErasure { _ in
            seen.lock.withLock { seen.timeout = RequestTimeout.total }
            return .ok(.init(body: .json(.init(request: DSRFixtures.request(kind: .erasure, status: .completed, planHash: PH), alreadyCompleted: true))))
        }
        #expect(try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH, "--confirm", "subject@example.com"]) == .ok)
        #expect(seen.lock.withLock { seen.timeout?.milliseconds ?? 0 } >= 3_600_000)
    }

    @Test func applyWithoutAPlanFails() async throws {
        let world = world()
        world.api.onGetDSRRequest { _ in .ok(.init(body: .json(DSRFixtures.request(kind: .erasure, status: .verified)))) }
        #expect(try await world.run(RaxxDSR.Apply.self, ["dsr_1", "--plan-hash", PH, "--confirm", "subject@example.com"]) == .failure)
    }

    @Test func theErasureActionHashIsBoundToRequestAndPlan() {
        let a = ErasureApplyAction(requestID: "dsr_1", planHash: PH).actionHash
        #expect(a != ErasureApplyAction(requestID: "dsr_2", planHash: PH).actionHash)
        #expect(a != ErasureApplyAction(requestID: "dsr_1", planHash: "PH2").actionHash)
        #expect(a == ErasureApplyAction(requestID: "dsr_1", planHash: PH).actionHash)
    }
}

@Suite struct DSRReceiptVerbTests {
    let files = MemoryDSRFiles()
    let key = Curve25519.Signing.PrivateKey()

    func world() -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.services = [Provided(files, as: (any DSRFiles).self)]
        return world
    }

    @Test func receiptKeepsTheKeyAtFirstUseAndVerifies() async throws {
        let world = world()
        let receipt = try DSRFixtures.receipt(key)
        world.api.onGetDSRReceipt { _ in .ok(.init(body: .json(receipt))) }
        let served = DSRFixtures.served(key)
        world.api.onGetDSRReceiptKey { _ in .ok(.init(body: .json(served))) }
        #expect(try await world.run(RaxxDSR.Receipt.self, ["dsr_1"]) == .ok)
        #expect(files.key?.key_id == DSRFixtures.keyID(key))
        #expect(world.jsonLines.first?["signature"] as? String == receipt.signature)
        // The second time, the kept key is used: no key fetch.
        let fetches = world.api.operations.filter { $0 == Operations.GetDSRReceiptKey.id }.count
        #expect(try await world.run(RaxxDSR.Receipt.self, ["dsr_1"]) == .ok)
        #expect(world.api.operations.filter { $0 == Operations.GetDSRReceiptKey.id }.count == fetches)
    }

    @Test func aReceiptFromAnotherKeyIsRefused() async throws {
        let world = world()
        files.key = try Receipts.keep(DSRFixtures.served(Curve25519.Signing.PrivateKey()), origin: Fixtures.origin, now: Fixtures.now)
        let receipt = try DSRFixtures.receipt(key)
        world.api.onGetDSRReceipt { _ in .ok(.init(body: .json(receipt))) }
        #expect(try await world.run(RaxxDSR.Receipt.self, ["dsr_1"]) == .failure)
        #expect(world.stdout.contents.isEmpty)
    }

    @Test func verifyReceiptOfflineAndFailsAfterOneByteChanges() async throws {
        let world = world()
        world.keystore = nil
        files.key = try Receipts.keep(DSRFixtures.served(key), origin: Fixtures.origin, now: Fixtures.now)
        let line = Data((try JSONLines.line(try DSRFixtures.receipt(key)) + "\n").utf8)
        files.files["r.json"] = line
        #expect(try await world.run(RaxxDSR.VerifyReceipt.self, ["r.json"]) == .ok)
        #expect(world.jsonLines.first?["valid"] as? Bool == true)
        // Change the rows count 12 → 13.
        var changed = line
        let at = try #require(String(decoding: line, as: UTF8.self).range(of: "\"rows\":12"))
        let offset = String(decoding: line, as: UTF8.self).utf8.distance(from: String(decoding: line, as: UTF8.self).startIndex, to: at.upperBound) - 1
        changed[offset] = UInt8(ascii: "3")
        files.files["changed.json"] = changed
        #expect(try await world.run(RaxxDSR.VerifyReceipt.self, ["changed.json"]) == .failure)
        files.files["junk.json"] = Data("not json".utf8)
        #expect(try await world.run(RaxxDSR.VerifyReceipt.self, ["junk.json"]) == .dataError)
        #expect(world.api.calls.isEmpty)
    }

    @Test func verifyReceiptWithoutAKeptKeyFails() async throws {
        let world = world()
        files.files["r.json"] = Data(try JSONLines.line(try DSRFixtures.receipt(key)).utf8)
        #expect(try await world.run(RaxxDSR.VerifyReceipt.self, ["r.json", "--format", "text"]) == .failure)
        #expect(world.stderr.contents.contains("No receipt key"))
    }

    @Test func auditPagesThroughTheSubjectsTrail() async throws {
        let world = world()
        world.api.onListSubjectAuditEvents { input in
            #expect(input.query.email == "subject@example.com")
            let cursor = input.query.cursor ?? 0
            let events = [Components.Schemas.AuditEvent(seq: cursor + 1, at: Fixtures.now, actor: "usr_1", action: "session.started", subject: "usr_1")]
            return .ok(.init(body: .json(.init(events: events, cursor: cursor + 1, hasMore: cursor < 2))))
        }
        #expect(try await world.run(RaxxDSR.Audit.self, ["--email", "subject@example.com"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["seq"] as? Int } == [1, 2, 3])
        #expect(try await world.run(RaxxDSR.Audit.self, ["--email", "nope"]) == .dataError)
    }

    /// An empty trail says why it may be empty (an unknown email, or an erased account's
    /// pseudonymised events), on stderr; stdout stays empty.
    @Test func anEmptyTrailSaysWhyItMayBeEmpty() async throws {
        let world = world()
        world.api.onListSubjectAuditEvents { _ in .ok(.init(body: .json(.init(events: [], cursor: 0, hasMore: false)))) }
        #expect(try await world.run(RaxxDSR.Audit.self, ["--email", "gone@example.com"]) == .ok)
        #expect(world.stdout.contents.isEmpty)
        #expect(world.stderr.contents.contains("No audit events for gone@example.com: no account has that email, or its account was erased"))
    }
}

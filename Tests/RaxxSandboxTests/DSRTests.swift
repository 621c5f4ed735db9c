import Crypto
import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire
import Synchronization
import Testing

@testable import RaxxSandbox

/// A clock a test moves.
final class MovableClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Date
    init(_ start: Date) { value = start }
    var now: Date { lock.withLock { value } }
    func set(_ date: Date) { lock.withLock { value = date } }
}

/// The sandbox's DSR operations through `RaptorService` (so through the access gate), over an
/// in-memory database: staff sessions, the state machine, deadlines, erasure and receipts.
struct DSRRig {
    let database: SandboxDatabase
    let clock: MovableClock
    let service: RaptorService

    init(now: Date = Date(timeIntervalSince1970: 1_795_000_000), chunkRows: Int = 5000, erasureYield: Duration = .milliseconds(1)) throws {
        database = try SandboxDatabase(path: ":memory:")
        clock = MovableClock(now)
        var configuration = SandboxConfiguration()
        configuration.erasureChunkRows = chunkRows
        configuration.erasureYield = erasureYield
        service = RaptorService(database: database, configuration: configuration, clock: { [clock] in clock.now })
    }

    /// A signed-in account (staff when asked) and its access token.
    func signIn(_ email: String, staff: Bool = false) async throws -> (token: String, account: Components.Schemas.Account) {
        let grant = try await signedInGrant(database, email: email, now: clock.now)
        if staff { #expect(try database.setStaff(email: email, staff: true, actor: "test")) }
        return (grant.accessToken, grant.account)
    }

    func `as`<T: Sendable>(_ token: String, _ body: () async throws -> T) async throws -> T {
        try await RequestIdentity.$bearerToken.withValue(token) { try await body() }
    }

    func open(_ token: String, email: String, kind: Components.Schemas.DSRKind, receivedAt: Date? = nil) async throws -> Components.Schemas.DSRRequest {
        try await self.as(token) {
            try await service.createDSRRequest(.init(body: .json(.init(email: email, kind: kind, ticket: "T-9", receivedAt: receivedAt)))).created.body.json
        }
    }

    func verify(_ token: String, _ id: String) async throws -> Components.Schemas.DSRRequest {
        try await self.as(token) {
            try await service.verifyDSRIdentity(.init(path: .init(requestId: id), body: .json(.init(method: "email reply")))).ok.body.json
        }
    }

    func extend(_ token: String, _ id: String) async throws -> Components.Schemas.DSRRequest {
        try await self.as(token) {
            try await service.extendDSRRequest(.init(path: .init(requestId: id), body: .json(.init(reason: "numerous requests")))).ok.body.json
        }
    }

    func plan(_ token: String, _ id: String) async throws -> Components.Schemas.ErasurePlan {
        try await self.as(token) { try await service.planDSRErasure(.init(path: .init(requestId: id))).ok.body.json }
    }

    /// A step-up grant for `userID` bound to applying `planHash` to `id`, as stepUpVerify records one.
    func grant(userID: String, id: String, planHash: String) async throws -> String {
        let grant = "grant-\(UUID().uuidString)"
        try await database.stores.auth.grantStepUp(
            grantHash: Tokens.hash(grant), userID: userID,
            actionHash: ErasureApplyAction(requestID: id, planHash: planHash).actionHash,
            expiresAt: clock.now.addingTimeInterval(120), now: clock.now)
        return grant
    }

    func apply(_ token: String, _ id: String, planHash: String, grant: String?) async throws -> Components.Schemas.ErasureOutcome {
        try await self.as(token) {
            try await service.applyDSRErasure(
                .init(
                    path: .init(requestId: id), headers: .init(raxxStepUpGrant: grant),
                    body: .json(.init(planHash: planHash)))
            ).ok.body.json
        }
    }

    /// Plans erasure `id` and applies the plan with a step-up of `staffID`'s.
    func erase(_ token: String, staffID: String, _ id: String) async throws -> Components.Schemas.ErasureOutcome {
        let plan = try await self.plan(token, id)
        return try await apply(token, id, planHash: plan.planHash, grant: try await grant(userID: staffID, id: id, planHash: plan.planHash))
    }

    /// Asks for a registration code for `email`, signed out (audited `registration.code_sent`, its subject the email).
    func sendRegistrationCode(_ email: String) async throws {
        _ = try await service.registerOptions(.init(body: .json(.init(email: email)))).accepted
    }

    func userID(_ email: String) async throws -> String {
        try await database.writer.read { try String.fetchOne($0, sql: "SELECT id FROM users WHERE email = ?", arguments: [email]) ?? "" }
    }

    func count(_ sql: String, _ arguments: StatementArguments = []) async throws -> Int {
        try await database.writer.read { try Int.fetchOne($0, sql: sql, arguments: arguments) ?? 0 }
    }
}

func day(_ text: String) -> Date { CalendarDay(parsing: text)!.start.addingTimeInterval(12 * 3600) }

@Suite struct DSRDeadlineTests {
    @Test(arguments: [
        ("2026-01-31", "2026-02-28"), ("2028-01-31", "2028-02-29"), ("2026-03-31", "2026-04-30"), ("2026-12-15", "2027-01-15"),
        ("2026-05-31", "2026-06-30"),
    ])
    func dueOneMonthFromReceiptClampedToTheMonthsEnd(received: String, due: String) {
        #expect(DSRDeadline.due(receivedAt: day(received)).description == due)
    }

    @Test func anExtensionIsTwoMoreMonthsOnceWithinTheFirstMonth() {
        let received = day("2026-01-31")
        #expect(DSRDeadline.extendedDue(receivedAt: received).description == "2026-04-30")
        #expect(DSRDeadline.extensionRefusal(receivedAt: received, alreadyExtended: false, today: CalendarDay(parsing: "2026-02-28")!) == nil)
        #expect(DSRDeadline.extensionRefusal(receivedAt: received, alreadyExtended: true, today: CalendarDay(parsing: "2026-02-01")!) != nil)
        #expect(DSRDeadline.extensionRefusal(receivedAt: received, alreadyExtended: false, today: CalendarDay(parsing: "2026-03-01")!) != nil)
    }
}

@Suite struct DSRStaffTests {
    @Test func aNonStaffCallerIsRefused403AndAudited() async throws {
        let rig = try DSRRig()
        let (token, account) = try await rig.signIn("user@example.com")
        let refused = await problem { _ = try await rig.open(token, email: "x@example.com", kind: .access) }
        #expect(refused?.status == 403 && refused?.code == .staffOnly)
        for call in [
            { _ = try await rig.as(token) { try await rig.service.listDSRRequests(.init()) } },
            { _ = try await rig.as(token) { try await rig.service.planDSRErasure(.init(path: .init(requestId: "x"))) } },
        ] {
            #expect(await problem(call)?.code == .staffOnly)
        }
        let userID = try await rig.userID("user@example.com")
        #expect(try await rig.count("SELECT COUNT(*) FROM audit_events WHERE action = 'access.refused' AND actor = ?", [userID]) == 3)
        #expect(try await rig.count("SELECT COUNT(*) FROM dsr_requests") == 0)
        // Granting the flag (audited) lets the same session in at its next request.
        #expect(try rig.database.setStaff(email: "user@example.com", staff: true, actor: "test"))
        #expect(try await rig.open(token, email: "x@example.com", kind: .access).status == .identityUnverified)
        #expect(try await rig.count("SELECT COUNT(*) FROM audit_events WHERE action = 'staff.granted' AND subject = ?", [userID]) == 1)
        _ = account
    }
}

@Suite struct DSRStateMachineTests {
    @Test func openedOn31JanuaryIsDueOnTheLastDayOfFebruaryAndExtendsOnceWithinTheFirstMonth() async throws {
        let rig = try DSRRig(now: day("2026-02-10"))
        let (staff, _) = try await rig.signIn("staff@example.com", staff: true)
        let r = try await rig.open(staff, email: "Subject@Example.com", kind: .access, receivedAt: day("2026-01-31"))
        #expect(r.dueOn == "2026-02-28" && r.subject == "subject@example.com" && r.openedBy == "staff@example.com" && !r.overdue)
        let extended = try await rig.extend(staff, r.id)
        #expect(extended.dueOn == "2026-04-30" && extended.extended)
        #expect(await problem { _ = try await rig.extend(staff, r.id) }?.code == .extensionRefused)
        // Another, received the same day, is past its first month on 1 March: no extension, and overdue.
        let late = try await rig.open(staff, email: "s2@example.com", kind: .access, receivedAt: day("2026-01-31"))
        rig.clock.set(day("2026-03-01"))
        let (later, _) = try await rig.signIn("staff@example.com", staff: true)
        #expect(await problem { _ = try await rig.extend(later, late.id) }?.code == .extensionRefused)
        let listed = try await rig.as(later) { try await rig.service.listDSRRequests(.init()).ok.body.json.requests }
        #expect(listed.map(\.id) == [late.id, r.id])
        #expect(listed.first?.overdue == true && listed.last?.overdue == false)
    }

    @Test func transitionsAreCheckedAndAuditedWithStaffAndTicket() async throws {
        let rig = try DSRRig()
        let (staff, _) = try await rig.signIn("staff@example.com", staff: true)
        let r = try await rig.open(staff, email: "s@example.com", kind: .erasure)
        #expect(await problem { _ = try await rig.plan(staff, r.id) }?.code == .identityUnverified)
        let verified = try await rig.verify(staff, r.id)
        #expect(verified.status == .verified && verified.verifiedBy == "staff@example.com" && verified.verificationMethod == "email reply")
        #expect(await problem { _ = try await rig.verify(staff, r.id) }?.code == .invalidState)
        #expect(
            await problem { _ = try await rig.as(staff) { try await rig.service.exportDSRData(.init(path: .init(requestId: r.id))) } }?
                .code == .invalidState)
        let cancelled = try await rig.as(staff) {
            try await rig.service.closeDSRRequest(.init(path: .init(requestId: r.id), body: .json(.init(status: .cancelled, reason: "withdrawn")))).ok.body.json
        }
        #expect(cancelled.status == .cancelled && cancelled.closedReason == "withdrawn")
        #expect(await problem { _ = try await rig.verify(staff, r.id) }?.code == .invalidState)
        #expect(await problem { _ = try await rig.verify(staff, "dsr_unknown") }?.status == 404)
        let trail = try await rig.database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT action, subject, details FROM audit_events WHERE subject = ? ORDER BY seq", arguments: ["dsr:" + r.id])
        }
        #expect(trail.map { $0["action"] as String } == ["dsr.opened", "dsr.identity_verified", "dsr.cancelled"])
        #expect(trail.allSatisfy { ($0["details"] as String).contains("\"ticket\":\"T-9\"") && ($0["details"] as String).contains("staff@example.com") })
    }

    @Test func anAccessExportHoldsEveryTableWithItsManifestAndCompletesTheRequest() async throws {
        let rig = try DSRRig()
        let (staff, _) = try await rig.signIn("staff@example.com", staff: true)
        let (subject, account) = try await rig.signIn("s@example.com")
        _ = try await rig.as(subject) {
            try await rig.service.placeOrder(
                .init(
                    body: .json(
                        .init(
                            clientOrderId: "c1", symbol: "AAPL", side: .buy, qty: 1, _type: .market,
                            tif: .day, notAfter: rig.clock.now.addingTimeInterval(60), mode: .paper))))
        }
        let r = try await rig.open(staff, email: "s@example.com", kind: .access)
        _ = try await rig.verify(staff, r.id)
        let export = try await rig.as(staff) { try await rig.service.exportDSRData(.init(path: .init(requestId: r.id))).ok.body.json }
        let counts = Dictionary(uniqueKeysWithValues: export.manifest.tables.map { ($0.table, $0.rows) })
        #expect(counts["account"] == 1 && counts["orders"] == 1 && counts["sessions"] == 1 && counts["dsr_requests"] == 1)
        #expect(counts["fills"] == Int64(try await rig.count("SELECT COUNT(*) FROM fills WHERE account_id = ?", [account.id])))
        #expect(
            Set(export.tables.additionalProperties.keys) == [
                "account", "passkeys", "sessions", "devices", "orders", "fills", "positions",
                "alerts", "audit_events", "dsr_requests",
            ])
        for entry in export.manifest.tables {
            let rows = try #require(export.tables.additionalProperties[entry.table])
            let sha = SHA256.hash(data: try CanonicalJSON.data(rows)).map { String(format: "%02x", $0) }.joined()
            #expect(sha == entry.sha256)
        }
        // The request completes only once the export is confirmed delivered (the file written).
        #expect(try await rig.as(staff) { try await rig.service.getDSRRequest(.init(path: .init(requestId: r.id))).ok.body.json }.status == .verified)
        _ = try await rig.as(staff) { try await rig.service.confirmDSRExport(.init(path: .init(requestId: r.id))).ok }
        #expect(try await rig.as(staff) { try await rig.service.getDSRRequest(.init(path: .init(requestId: r.id))).ok.body.json }.status == .completed)
    }

    /// A staff member's own request is handled by another: they cannot open it, nor take a step
    /// of one another staff member opened (applying is refused before their step-up is spent).
    @Test func aStaffMembersOwnRequestIsHandledByAnother() async throws {
        let rig = try DSRRig()
        let (a, _) = try await rig.signIn("a@example.com", staff: true)
        let (b, _) = try await rig.signIn("b@example.com", staff: true)
        let own = "A staff member's own request is handled by another staff member."
        let opened = await problem { _ = try await rig.open(a, email: "A@example.com", kind: .erasure) }
        #expect(opened?.status == 403 && opened?.code == .forbidden && opened?.title == own)
        #expect(try await rig.count("SELECT COUNT(*) FROM dsr_requests") == 0)
        let r = try await rig.open(b, email: "a@example.com", kind: .erasure)
        #expect(await problem { _ = try await rig.verify(a, r.id) }?.code == .forbidden)
        _ = try await rig.verify(b, r.id)
        #expect(await problem { _ = try await rig.plan(a, r.id) }?.code == .forbidden)
        let plan = try await rig.plan(b, r.id)
        let aID = try await rig.userID("a@example.com")
        let grant = try await rig.grant(userID: aID, id: r.id, planHash: plan.planHash)
        let applied = await problem { _ = try await rig.apply(a, r.id, planHash: plan.planHash, grant: grant) }
        #expect(applied?.status == 403 && applied?.code == .forbidden && applied?.title == own)
        #expect(try await rig.count("SELECT COUNT(*) FROM step_up_grants WHERE user_id = ? AND used_at IS NULL", [aID]) == 1)
        #expect(try await rig.as(b) { try await rig.service.getDSRRequest(.init(path: .init(requestId: r.id))).ok.body.json }.status == .planned)
        // Another staff member applies it.
        #expect(try await rig.erase(b, staffID: try await rig.userID("b@example.com"), r.id).request.status == .completed)
    }

    @Test func anExportIsConfirmedDeliveredOnlyOnceMade() async throws {
        let rig = try DSRRig()
        let (staff, _) = try await rig.signIn("staff@example.com", staff: true)
        _ = try await rig.signIn("s@example.com")
        let r = try await rig.open(staff, email: "s@example.com", kind: .access)
        _ = try await rig.verify(staff, r.id)
        let early = await problem { _ = try await rig.as(staff) { try await rig.service.confirmDSRExport(.init(path: .init(requestId: r.id))).ok } }
        #expect(early?.code == .invalidState)
    }
}

@Suite struct DSRErasureTests {
    /// An erasure request for a subject with a session, an order (and its fill), a device, ready to plan.
    func setUp(_ rig: DSRRig) async throws -> (staff: String, staffID: String, subject: String, account: Components.Schemas.Account, id: String) {
        let (staff, _) = try await rig.signIn("staff@example.com", staff: true)
        let (subject, account) = try await rig.signIn("s@example.com")
        _ = try await rig.as(subject) {
            try await rig.service.placeOrder(
                .init(
                    body: .json(
                        .init(
                            clientOrderId: "c1", symbol: "AAPL", side: .buy, qty: 1, _type: .market,
                            tif: .day, notAfter: rig.clock.now.addingTimeInterval(60), mode: .paper))))
        }
        _ = try await rig.as(subject) {
            try await rig.service.registerAPNsDevice(.init(body: .json(.init(token: String(repeating: "ab", count: 32), environment: .sandbox))))
        }
        let r = try await rig.open(staff, email: "s@example.com", kind: .erasure)
        _ = try await rig.verify(staff, r.id)
        return (staff, try await rig.userID("staff@example.com"), subject, account, r.id)
    }

    /// The plan can be read back (GET) before it was ever made (POST), on a database that has never
    /// needed its DSR keys before: the read makes none, and does not fail.
    @Test func thePlanCanBeCheckedFirstOnADatabaseWithoutKeysYet() async throws {
        let rig = try DSRRig()
        let s = try await setUp(rig)
        let checked = try await rig.as(s.staff) {
            try await rig.service.checkDSRErasurePlan(.init(path: .init(requestId: s.id))).ok.body.json
        }
        #expect(checked.planHash == (try await rig.plan(s.staff, s.id)).planHash)
    }

    @Test func planApplyWithAStepUpLeavesNoIdentifierAndSignsAReceipt() async throws {
        let rig = try DSRRig(chunkRows: 1)
        let s = try await setUp(rig)
        let userID = try await rig.userID("s@example.com")
        let plan = try await rig.plan(s.staff, s.id)
        let rows = Dictionary(plan.items.map { ($0.table + ":" + $0.action.rawValue, $0.rows) }, uniquingKeysWith: +)
        #expect(rows["sessions:delete"] == 1 && rows["device_tokens:delete"] == 1 && rows["orders:delete"] == 1 && rows["users:delete"] == 1)
        // Without a grant: step_up_required with the plan's action hash (audited); with one for another plan: refused.
        let required = await problem { _ = try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: nil) }
        #expect(required?.code == .stepUpRequired)
        #expect(required?.actionHash == ErasureApplyAction(requestID: s.id, planHash: plan.planHash).actionHash)
        let wrong = try await rig.grant(userID: s.staffID, id: s.id, planHash: "another")
        #expect(await problem { _ = try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: wrong) }?.code == .stepUpInvalid)
        let grant = try await rig.grant(userID: s.staffID, id: s.id, planHash: plan.planHash)
        let outcome = try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: grant)
        #expect(outcome.request.status == .completed && !outcome.alreadyCompleted)
        #expect(outcome.request.subject.hasPrefix("hmac-sha256:"))
        // No table holds the subject's email, user id or account id, except pseudonymised rows.
        for table in [
            "users", "accounts", "sessions", "passkeys", "device_tokens", "orders", "fills", "positions", "events", "change_log",
            "challenges", "step_up_grants", "dsr_requests", "audit_events",
        ] {
            let dump = try await rig.database.writer.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM \(table)").map { $0.description }.joined(separator: "\n")
            }
            for identifier in ["s@example.com", userID, s.account.id] {
                #expect(!dump.localizedCaseInsensitiveContains(identifier), "\(table) still holds \(identifier)")
            }
        }
        #expect(try await rig.count("SELECT COUNT(*) FROM audit_events WHERE actor LIKE 'psn_%' OR subject LIKE 'psn_%'") > 0)
        // The subject's session is gone: 401.
        #expect(await problem { _ = try await rig.as(s.subject) { try await rig.service.getSession(.init()) } }?.status == 401)
        // Applying again changes nothing and says so, without a grant.
        let again = try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: nil)
        #expect(again.alreadyCompleted && again.request.completedAt == outcome.request.completedAt)
        // The receipt verifies under the served key, and not after a change.
        let receipt = try await rig.as(s.staff) { try await rig.service.getDSRReceipt(.init(path: .init(requestId: s.id))).ok.body.json }
        let key = try await rig.service.getDSRReceiptKey(.init()).ok.body.json
        let publicKey = try Curve25519.Signing.PublicKey(rawRepresentation: Base64URL.decode(key.publicKey)!)
        let signature = Data(Base64URL.decode(receipt.signature)!)
        #expect(publicKey.isValidSignature(signature, for: try CanonicalJSON.data(receipt.receipt)))
        var changed = receipt.receipt
        changed.items[0].rows += 1
        #expect(!publicKey.isValidSignature(signature, for: try CanonicalJSON.data(changed)))
        #expect(receipt.receipt.planHash == plan.planHash && receipt.keyId == key.keyId)
    }

    /// Erasing bob@x.test replaces his identifiers where a value is one whole: the events of
    /// jimbob@x.test (whose email ends with bob's), as actor, subject or staff member in the
    /// details, are left as they were.
    @Test func anErasureLeavesAnEmailEndingWithTheSubjectsAlone() async throws {
        let rig = try DSRRig()
        let (jim, _) = try await rig.signIn("jimbob@x.test", staff: true)
        _ = try await rig.signIn("bob@x.test")
        for email in ["bob@x.test", "jimbob@x.test"] { try await rig.sendRegistrationCode(email) }
        let jimID = try await rig.userID("jimbob@x.test")
        let r = try await rig.open(jim, email: "bob@x.test", kind: .erasure)
        _ = try await rig.verify(jim, r.id)
        let last = try await rig.count("SELECT MAX(seq) FROM audit_events")
        func jims() async throws -> [String] {
            try await rig.database.writer.read { db in
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT seq || ' ' || actor || ' ' || action || ' ' || subject || ' ' || details FROM audit_events
                        WHERE seq <= ?2 AND (actor IN (?1, 'jimbob@x.test')
                                             OR subject IN (?1, 'jimbob@x.test', (SELECT id FROM accounts WHERE user_id = ?1)))
                        ORDER BY seq
                        """, arguments: [jimID, last])
            }
        }
        let before = try await jims()
        #expect(before.contains { $0.contains(" registration.code_sent jimbob@x.test ") })
        #expect(before.contains { $0.contains(#""staff":"jimbob@x.test""#) })
        #expect(try await rig.erase(jim, staffID: jimID, r.id).request.status == .completed)
        #expect(try await jims() == before)
        // A pseudonym stands for a whole value, never inside a longer one.
        #expect(try await rig.count("SELECT COUNT(*) FROM audit_events WHERE instr(actor, 'psn_') > 1 OR instr(subject, 'psn_') > 1") == 0)
        // Bob's own registration event is his no more.
        #expect(try await rig.count("SELECT COUNT(*) FROM audit_events WHERE action = 'registration.code_sent' AND subject LIKE 'psn_%'") == 1)
        #expect(try await rig.count("SELECT COUNT(*) FROM audit_events WHERE subject = 'bob@x.test' OR details LIKE '%\"bob@x.test\"%'") == 0)
    }

    /// The access export holds every audit event the erasure would pseudonymise, and no other but
    /// those of the subject's own requests; the plan counts the same events. On a seeded account
    /// with events keyed by its email (a registration code sent, a wrong one tried), one naming it
    /// in its details alone, and another account's whose email ends with the subject's.
    @Test func theAccessExportHoldsEveryAuditEventTheErasureChanges() async throws {
        let rig = try DSRRig()
        let s = try await setUp(rig)
        _ = try Seeder(database: rig.database, market: Market()).seed(email: "s@example.com", positions: 3, fills: 20, now: rig.clock.now)
        try await rig.sendRegistrationCode("s@example.com")
        try await rig.sendRegistrationCode("jims@example.com")
        #expect(
            await problem {
                _ = try await rig.service.registerOptions(.init(body: .json(.init(email: "s@example.com", code: "00000000"))))
            }?.code == .codeInvalid)
        let now = rig.clock.now
        try await rig.database.writer.write { db in
            let session = try #require(
                try String.fetchOne(
                    db, sql: "SELECT id FROM sessions WHERE user_id = (SELECT user_id FROM accounts WHERE id = ?)",
                    arguments: [s.account.id]))
            try SandboxDatabase.audit(
                db,
                AuditEntry(
                    at: now, actor: "system", action: .sessionRevoked, subject: "unknown",
                    details: ["session_id": session]))
        }
        let access = try await rig.open(s.staff, email: "s@example.com", kind: .access)
        _ = try await rig.verify(s.staff, access.id)
        let export = try await rig.as(s.staff) { try await rig.service.exportDSRData(.init(path: .init(requestId: access.id))).ok.body.json }
        let exported = try #require(export.tables.additionalProperties["audit_events"]).map { row in
            (
                seq: row.additionalProperties.value["seq"].flatMap { $0 } as? Int ?? -1,
                subject: row.additionalProperties.value["subject"].flatMap { $0 } as? String ?? ""
            )
        }
        #expect(exported.filter { $0.subject == "s@example.com" }.count == 2)
        #expect(exported.contains { $0.subject == "unknown" })
        let requests: Set<String> = ["dsr:" + s.id, "dsr:" + access.id]

        let plan = try await rig.plan(s.staff, s.id)
        func trail() async throws -> [Int: String] {
            try await rig.database.writer.read { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT seq, actor, subject, details FROM audit_events").map { row in
                        (row["seq"] as Int, "\(row["actor"] as String) \(row["subject"] as String) \(row["details"] as String)")
                    })
            }
        }
        let before = try await trail()
        let grant = try await rig.grant(userID: s.staffID, id: s.id, planHash: plan.planHash)
        #expect(try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: grant).request.status == .completed)
        let after = try await trail()
        let changed = Set(before.keys.filter { before[$0] != after[$0] })
        #expect(!changed.isEmpty)
        #expect(changed == Set(exported.filter { !requests.contains($0.subject) }.map(\.seq)))
        #expect(plan.items.first { $0.table == "audit_events" }?.rows == Int64(changed.count))
        #expect(try await rig.count("SELECT COUNT(*) FROM audit_events WHERE subject = 'jims@example.com'") == 1)
    }

    /// A staff member erased: the requests they opened or verified name them by the keyed hash
    /// their own request's subject became, and no table holds their email.
    @Test func anErasedStaffMemberIsNamedByTheKeyedHashInTheRequestsTheyHandled() async throws {
        let rig = try DSRRig()
        let (a, _) = try await rig.signIn("a@example.com", staff: true)
        let (b, _) = try await rig.signIn("b@example.com", staff: true)
        _ = try await rig.signIn("s@example.com")
        let handled = try await rig.open(a, email: "s@example.com", kind: .access)
        _ = try await rig.verify(a, handled.id)
        // The access export shows every request the erasure changes: a's own, and the one a
        // handled, by its id and a's part in it, nothing of its subject.
        let access = try await rig.open(b, email: "a@example.com", kind: .access)
        _ = try await rig.verify(b, access.id)
        let export = try await rig.as(b) { try await rig.service.exportDSRData(.init(path: .init(requestId: access.id))).ok.body.json }
        let exported = try #require(export.tables.additionalProperties["dsr_requests"]).map { row in
            (
                id: row.additionalProperties.value["id"].flatMap { $0 } as? String ?? "",
                role: row.additionalProperties.value["role"].flatMap { $0 } as? String ?? ""
            )
        }
        #expect(exported.map(\.id) == [handled.id, access.id] && exported.map(\.role) == ["opened_and_verified", "subject"], "\(exported)")
        #expect(!String(describing: export.tables.additionalProperties["dsr_requests"]).contains("s@example.com"))
        _ = try await rig.as(b) { try await rig.service.confirmDSRExport(.init(path: .init(requestId: access.id))).ok }
        let r = try await rig.open(b, email: "a@example.com", kind: .erasure)
        _ = try await rig.verify(b, r.id)
        let plan = try await rig.plan(b, r.id)
        #expect(plan.items.first { $0.table == "dsr_requests" }?.rows == 3)
        let grant = try await rig.grant(userID: try await rig.userID("b@example.com"), id: r.id, planHash: plan.planHash)
        let outcome = try await rig.apply(b, r.id, planHash: plan.planHash, grant: grant)
        #expect(outcome.request.status == .completed && outcome.request.subject.hasPrefix("hmac-sha256:"))
        let after = try await rig.as(b) { try await rig.service.getDSRRequest(.init(path: .init(requestId: handled.id))).ok.body.json }
        #expect(after.openedBy == outcome.request.subject && after.verifiedBy == outcome.request.subject)
        let dump = try await rig.database.writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'").flatMap { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"").map(\.description)
            }.joined(separator: "\n")
        }
        #expect(!dump.localizedCaseInsensitiveContains("a@example.com"))
        #expect(dump.contains("b@example.com"))
    }

    @Test func aPlanIsStaleOnceTheDataChanges() async throws {
        let rig = try DSRRig()
        let s = try await setUp(rig)
        let plan = try await rig.plan(s.staff, s.id)
        _ = try await rig.as(s.subject) {
            try await rig.service.placeOrder(
                .init(
                    body: .json(
                        .init(
                            clientOrderId: "c2", symbol: "MSFT", side: .buy, qty: 1, _type: .market,
                            tif: .day, notAfter: rig.clock.now.addingTimeInterval(60), mode: .paper))))
        }
        let grant = try await rig.grant(userID: s.staffID, id: s.id, planHash: plan.planHash)
        #expect(await problem { _ = try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: grant) }?.code == .planStale)
        // Nothing changed: the subject still signs in, the grant was not spent.
        #expect(try await rig.as(s.subject) { try await rig.service.getSession(.init()).ok.body.json }.account.email == "s@example.com")
        #expect(try await rig.count("SELECT COUNT(*) FROM step_up_grants WHERE used_at IS NULL") == 1)
        // Planning again gives a plan that applies.
        let fresh = try await rig.plan(s.staff, s.id)
        #expect(fresh.planHash != plan.planHash)
        let second = try await rig.grant(userID: s.staffID, id: s.id, planHash: fresh.planHash)
        #expect(try await rig.apply(s.staff, s.id, planHash: fresh.planHash, grant: second).request.status == .completed)
    }

    @Test func signInHousekeepingBetweenPlanAndApplyDoesNotMakeThePlanStale() async throws {
        let rig = try DSRRig()
        let s = try await setUp(rig)
        let userID = try await rig.userID("s@example.com")
        try await rig.database.writer.write { db in
            try db.execute(
                sql: "INSERT INTO challenges (challenge, purpose, user_id, expires_at, used_at) VALUES ('spent', 'login', ?, 0, 0)",
                arguments: [userID])
        }
        let plan = try await rig.plan(s.staff, s.id)
        // The staff member's step-up prunes spent challenges (the subject's among them).
        _ = try await rig.as(s.staff) { try await rig.service.stepUpOptions(.init(body: .json(.init(actionHash: "x")))) }
        #expect(try await rig.count("SELECT COUNT(*) FROM challenges WHERE challenge = 'spent'") == 0)
        let grant = try await rig.grant(userID: s.staffID, id: s.id, planHash: plan.planHash)
        #expect(try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: grant).request.status == .completed)
    }

    /// An erasure begun (its first transaction done) of an account seeded with 1,000 fills.
    func beganErasure(_ rig: DSRRig) async throws -> (staff: String, staffID: String, subject: String, account: Components.Schemas.Account, id: String) {
        let s = try await setUp(rig)
        _ = try Seeder(database: rig.database, market: Market()).seed(email: "s@example.com", positions: 5, fills: 1_000, now: rig.clock.now)
        let plan = try await rig.plan(s.staff, s.id)
        let grant = try await rig.grant(userID: s.staffID, id: s.id, planHash: plan.planHash)
        _ = try await rig.database.stores.dsr.beginErasure(
            id: s.id, planHash: plan.planHash, grant: grant, rules: ErasureRule.allCases,
            staffUserID: s.staffID, now: rig.clock.now)
        return s
    }

    /// One chunk of erasure `id`'s history: the rows it took and how often it gave way. Another
    /// write waits for the lock from the `waitingAfter`th step on (asked after each step), or never.
    func chunk(_ rig: DSRRig, _ id: String, limit: Int, waitingAfter steps: Int?) async throws -> (rows: Int, gaveWay: Int) {
        try await rig.database.writer.write { db in
            var asked = 0, gaveWay = 0
            let rows = try DSRStore.eraseChunk(
                db, erasing: DecodedSubject(), id: id, rules: ErasureRule.allCases, auditCursor: 0,
                limit: limit,
                othersWaiting: {
                    asked += 1; return steps.map { asked >= $0 } ?? false
                },
                giveWay: { gaveWay += 1 }
            ).rows
            return (rows, gaveWay)
        }
    }

    /// A chunk deletes its rows a step at a time and ends after the step in which another write
    /// began to wait for the lock: another account's order waits for a step, not a whole chunk.
    @Test func aChunkEndsAfterTheStepInWhichAnotherWriteWaits() async throws {
        let rig = try DSRRig()
        let s = try await beganErasure(rig)
        let fills = "SELECT COUNT(*) FROM fills WHERE account_id = ?"
        let before = try await rig.count(fills, [s.account.id])
        #expect(before >= 1_000)
        let step = ErasureChunkSizing.stepRows
        // A write waits from the start: one step.
        #expect(try await chunk(rig, s.id, limit: 500, waitingAfter: 1).rows == step)
        // One begins to wait during the third step: three.
        #expect(try await chunk(rig, s.id, limit: 500, waitingAfter: 3).rows == 3 * step)
        // None: the chunk's whole limit, the last step the rest of it.
        #expect(try await chunk(rig, s.id, limit: 500, waitingAfter: nil).rows == 500)
        #expect(try await rig.count(fills, [s.account.id]) == before - 4 * step - 500)
    }

    /// The audit trail's pseudonymisation goes a step of events at a time too, and ends after the
    /// step in which another write began to wait. It used to take a whole chunk's events at once:
    /// on a trail of 41,000 events, another account's orders waited a quarter of a second behind it.
    @Test func anAuditChunkEndsAfterTheStepInWhichAnotherWriteWaits() async throws {
        let rig = try DSRRig()
        let s = try await beganErasure(rig)
        let step = ErasureChunkSizing.stepRows
        try await rig.database.writer.write { db in
            let user = try #require(try String.fetchOne(db, sql: "SELECT user_id FROM accounts WHERE id = ?", arguments: [s.account.id]))
            // The history deleted: the erasure's next chunk goes to the audit trail, where five
            // steps of events name the subject after those already there.
            for rule in ErasureRule.allCases {
                if case .delete(let sql) = rule.historyStep {
                    try db.execute(sql: sql, arguments: ["user": user, "account": s.account.id, "limit": 1_000_000])
                }
            }
            let start = try #require(try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM audit_events"))
            try db.execute(
                sql: """
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
                    INSERT INTO audit_events (at, actor, action, subject, details) SELECT 0, ?, 'test.event', 'test', '{}' FROM n
                    """, arguments: [5 * step, user])
            func naming(after seq: Int64) throws -> Int {
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM audit_events WHERE seq > ? AND actor = ?", arguments: [seq, user]) ?? -1
            }
            // Another write waits from the second step on: two steps, given way after each.
            var asked = 0, gaveWay = 0
            let cut = try DSRStore.eraseChunk(
                db, erasing: DecodedSubject(), id: s.id, rules: ErasureRule.allCases, auditCursor: start,
                limit: 10 * step,
                othersWaiting: {
                    asked += 1; return asked >= 2
                },
                giveWay: { gaveWay += 1 })
            #expect(cut.rows == 2 * step && !cut.done && gaveWay == 2)
            #expect(try naming(after: start) == 3 * step)
            #expect(try naming(after: cut.auditCursor) == 3 * step)
            // Nobody waiting: the rest, and the trail is through.
            let rest = try DSRStore.eraseChunk(
                db, erasing: DecodedSubject(), id: s.id, rules: ErasureRule.allCases,
                auditCursor: cut.auditCursor, limit: 10 * step, giveWay: {})
            #expect(rest.rows == 3 * step && rest.done)
            #expect(try naming(after: start) == 0)
        }
    }

    /// Between two steps, a chunk gives its core to any thread ready to run (`giveWay`): once after
    /// each step, the last one included, whether it ends the chunk or not.
    @Test func aChunkGivesWayAfterEachStep() async throws {
        let rig = try DSRRig()
        let s = try await beganErasure(rig)
        let step = ErasureChunkSizing.stepRows
        // 500 rows: seven whole steps and one of the rest.
        let whole = try await chunk(rig, s.id, limit: 500, waitingAfter: nil)
        #expect(whole.rows == 500 && whole.gaveWay == (500 + step - 1) / step)
        // Another write waits from the third step on: three steps, three times.
        let cut = try await chunk(rig, s.id, limit: 500, waitingAfter: 3)
        #expect(cut.rows == 3 * step && cut.gaveWay == 3)
    }

    /// The stores' writes are counted as waiting from the call until their transaction starts
    /// (a turn ends once, however often it is told: in the transaction, and after the call).
    @Test func aStoreWriteIsCountedWhileItWaitsForTheLock() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let writer = StoreWriter(base: database.writer, waiting: database.waitingWrites)
        // The lock held (on the writer's own queue) until the test lets go.
        let release = DispatchSemaphore(value: 0)
        let held = Mutex(false)
        database.writer.asyncWrite(
            { _ in
                held.withLock { $0 = true }
                release.wait()
            }, completion: { _, _ in })
        while !held.withLock({ $0 }) { await Task.yield() }
        #expect(!database.waitingWrites.any)
        let write = Task { try await writer.write { db in try Int.fetchOne(db, sql: "SELECT 1") } }
        while !database.waitingWrites.any { await Task.yield() }
        release.signal()
        #expect(try await write.value == 1)
        #expect(!database.waitingWrites.any)

        let turn = WaitingWrites.Turn(database.waitingWrites)
        #expect(database.waitingWrites.any)
        turn.began()
        turn.began()
        #expect(!database.waitingWrites.any)
    }

    @Test func aCrashAfterTheFirstTransactionResumes() async throws {
        let rig = try DSRRig()
        let s = try await setUp(rig)
        let plan = try await rig.plan(s.staff, s.id)
        let grant = try await rig.grant(userID: s.staffID, id: s.id, planHash: plan.planHash)
        // Only the first transaction runs (as when the process dies right after it).
        let dsr = rig.database.stores.dsr
        _ = try await dsr.beginErasure(
            id: s.id, planHash: plan.planHash, grant: grant, rules: ErasureRule.allCases, staffUserID: s.staffID,
            now: rig.clock.now)
        _ = try await rig.database.writer.write { db in
            try DSRStore.eraseChunk(db, erasing: DecodedSubject(), id: s.id, rules: ErasureRule.allCases, auditCursor: 0, limit: 1)
        }
        #expect(try await rig.as(s.staff) { try await rig.service.getDSRRequest(.init(path: .init(requestId: s.id))).ok.body.json }.status == .erasing)
        #expect(try await rig.count("SELECT COUNT(*) FROM sessions WHERE user_id = (SELECT user_id FROM accounts WHERE id = ?)", [s.account.id]) == 0)
        // Applying again needs a new step-up, and finishes.
        #expect(await problem { _ = try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: grant) }?.code == .stepUpInvalid)
        let again = try await rig.grant(userID: s.staffID, id: s.id, planHash: plan.planHash)
        #expect(try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: again).request.status == .completed)
        #expect(try await rig.count("SELECT COUNT(*) FROM accounts WHERE id = ?", [s.account.id]) == 0)
    }

    @Test func anErasureGivesWayWhileOtherRequestsKeepComing() async throws {
        let rig = try DSRRig(chunkRows: 1, erasureYield: .milliseconds(40))
        let s = try await setUp(rig)
        let plan = try await rig.plan(s.staff, s.id)
        let grant = try await rig.grant(userID: s.staffID, id: s.id, planHash: plan.planHash)
        // Another account's requests keep coming while the erasure runs, a chunk (one row) at a time.
        let others = Task {
            while !Task.isCancelled {
                rig.service.activity.note()
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
        let started = ContinuousClock.now
        let outcome = try await rig.apply(s.staff, s.id, planHash: plan.planHash, grant: grant)
        let took = ContinuousClock.now - started
        others.cancel()
        #expect(outcome.request.status == .completed)
        // At least the subject's order, its change-log entries and its events: chunks, each followed by 40 ms.
        #expect(took >= .milliseconds(80), "the erasure took \(took)")
    }

    /// The next table cannot be forgotten: every table of the sandbox's schema with a column that
    /// can hold personal data (a user, account, email, token, device, session or subject
    /// reference) is covered by an erasure rule, or says why it needs none; one that says it goes
    /// with another table's rows really is deleted with them.
    @Test func everyTableHoldingPersonalDataHasAnErasureRule() throws {
        let database = try SandboxDatabase(path: ":memory:")
        let covered = Set(ErasureRule.allCases.flatMap(\.coveredTables))
        let personal = [
            "user", "account", "email", "token", "device", "session", "subject", "actor", "handle", "display_name",
            "opened_by", "verified_by",
        ]
        let schema = try database.writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT m.name AS tbl, p.name AS col FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name
                    """
            ).map { (table: $0["tbl"] as String, column: $0["col"] as String) }
        }
        #expect(schema.count > 50)
        var holding: Set<String> = []
        for (table, column) in schema where personal.contains(where: { column.lowercased().contains($0) }) { holding.insert(table) }
        #expect(holding.contains("users") && holding.contains("fills") && holding.contains("email_codes"))
        for table in holding.sorted() {
            #expect(
                covered.contains(table) || ErasureRule.withoutRule[table] != nil,
                "\(table) holds personal data and no erasure rule covers it (nor does ErasureRule.withoutRule say why it needs none)")
        }
        // Every table is known: covered, or said to need no rule.
        for table in Set(schema.map(\.table)) {
            #expect(covered.contains(table) || ErasureRule.withoutRule[table] != nil, "\(table) is in neither the rules nor withoutRule")
        }
        for (table, parent) in ErasureRule.deletedWith {
            #expect(covered.contains(parent))
            let cascades = try database.writer.read { db in
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM pragma_foreign_key_list(?) WHERE \"table\" = ? AND on_delete = 'CASCADE'",
                    arguments: [table, parent]) ?? false
            }
            #expect(cascades, "\(table) is said to go with \(parent) but is not deleted with it")
        }
        // Every rule names a table that exists, counts with valid SQL, and erases something.
        let tables = Set(schema.map(\.table))
        for rule in ErasureRule.allCases {
            #expect(rule.coveredTables.allSatisfy(tables.contains), "\(rule.id)")
            #expect(
                !rule.identifierStatements.isEmpty || rule.historyStep != nil || !rule.finalStatements.isEmpty || rule.refusesErasureWhenPresent,
                "\(rule.id) erases nothing")
        }
    }

    @Test func raxx7PrintsTheErasureRulesTable() throws {
        let page = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/man/raxx.7", encoding: .utf8)
        // A row: the table, then what an erasure does, how long it keeps it and on what ground, and
        // what the table holds, wrapped in one cell (five columns do not fit 80).
        func row(_ table: String, _ action: String, _ retention: String, _ ground: String, _ what: String) -> String {
            "\n\(table)|T{\n.na\n\\fB\(action)\\fR; kept: \(retention); \(ground)\n.br\n\(what)\nT}\n"
        }
        for rule in ErasureRule.allCases {
            #expect(page.contains(row(rule.table, rule.action.rawValue, rule.retention, rule.ground, rule.what)), "raxx.7 lacks the rule \(rule.id)")
        }
        // And every table that can hold a link to a person without a rule of its own: what an
        // erasure does to it (cancel_after and closed_account_tokens were missing).
        let companions = ErasureRule.companions.map(\.table)
        #expect(
            Set(companions).isSuperset(of: [
                "email_codes", "email_code_attempts", "spent_renewal_tokens", "cancel_after",
                "closed_account_tokens",
            ]))
        for companion in ErasureRule.companions {
            #expect(
                page.contains(row(companion.table, companion.action, companion.retention, companion.ground, companion.what)),
                "raxx.7 lacks \(companion.table)")
        }
    }
}

/// An erasure's chunks are sized to hold the write lock for about the budget each.
@Suite struct ErasureChunkSizingTests {
    @Test func chunksGrowOrShrinkTowardTheBudgetByAtMostTwiceAtATime() {
        var sizing = ErasureChunkSizing(maxRows: 20_000, budget: .milliseconds(4))
        #expect(sizing.rows == 500)
        // 500 rows in 1 ms: the budget holds 2,000, but a chunk at most doubles.
        sizing.record(rows: 500, took: .milliseconds(1))
        #expect(sizing.rows == 1000)
        sizing.record(rows: 1000, took: .milliseconds(2))
        #expect(sizing.rows == 2000)
        // A slow chunk (a checkpoint) halves it, no more.
        sizing.record(rows: 2000, took: .milliseconds(400))
        #expect(sizing.rows == 1000)
        // At the budget's pace, the size stays.
        sizing.record(rows: 1000, took: .milliseconds(4))
        #expect(sizing.rows == 1000)
        // An empty chunk (a table finished) says nothing about the pace.
        sizing.record(rows: 0, took: .milliseconds(9))
        #expect(sizing.rows == 1000)
    }

    @Test func neverAboveTheMostRowsNorBelowFifty() {
        var small = ErasureChunkSizing(maxRows: 4, budget: .milliseconds(4))
        #expect(small.rows == 4)
        small.record(rows: 4, took: .microseconds(1))
        #expect(small.rows == 4)
        var slow = ErasureChunkSizing(maxRows: 20_000, budget: .milliseconds(4))
        for _ in 0..<10 { slow.record(rows: slow.rows, took: .seconds(1)) }
        #expect(slow.rows == 50)
        var fast = ErasureChunkSizing(maxRows: 20_000, budget: .milliseconds(4))
        for _ in 0..<10 { fast.record(rows: fast.rows, took: .microseconds(10)) }
        #expect(fast.rows == 20_000)
    }
}

/// A chunk's steps: at most `stepRows` rows each, until the chunk's limit, the step in which
/// another write begins to wait, or the end of the rows.
@Suite struct ErasureChunkStepsTests {
    let step = ErasureChunkSizing.stepRows

    /// A chunk over `left` rows, another write waiting from the `waitingAfter`th time it is asked
    /// on (or never): the rows each step asked for, how often it gave way, and how it ended.
    func chunk(left: Int, limit: Int, waitingAfter: Int? = nil, givingWayAfterEmptySteps: Bool = false)
        -> (asked: [Int], gaveWay: Int, outcome: ErasureChunkSteps.Outcome)
    {
        var remaining = left, asked: [Int] = [], questions = 0, gaveWay = 0
        let outcome = ErasureChunkSteps.run(
            limit: limit, givingWayAfterEmptySteps: givingWayAfterEmptySteps,
            othersWaiting: {
                questions += 1
                return waitingAfter.map { questions >= $0 } ?? false
            },
            giveWay: { gaveWay += 1 }
        ) { rows in
            asked.append(rows)
            let found = min(rows, remaining)
            remaining -= found
            return found
        }
        return (asked, gaveWay, outcome)
    }

    @Test func stepsUpToTheLimitTheLastTheRestOfIt() {
        let whole = chunk(left: 1_000, limit: 500)
        #expect(whole.asked == Array(repeating: step, count: 500 / step) + [500 % step])
        #expect(whole.outcome == ErasureChunkSteps.Outcome(rows: 500, through: false) && whole.gaveWay == whole.asked.count)
    }

    @Test func theChunkEndsAfterTheStepInWhichAnotherWriteWaits() {
        let cut = chunk(left: 1_000, limit: 500, waitingAfter: 3)
        #expect(cut.asked == [step, step, step] && cut.gaveWay == 3)
        #expect(cut.outcome == ErasureChunkSteps.Outcome(rows: 3 * step, through: false))
    }

    @Test func aStepThatFindsFewerThanItAskedEndsTheRows() {
        let short = chunk(left: step + 1, limit: 500)
        #expect(short.asked == [step, step] && short.outcome == ErasureChunkSteps.Outcome(rows: step + 1, through: true) && short.gaveWay == 2)
        // A last step that finds nothing gives way only when told to (the audit trail's reads).
        #expect(chunk(left: 2 * step, limit: 500).gaveWay == 2)
        let empty = chunk(left: 2 * step, limit: 500, givingWayAfterEmptySteps: true)
        #expect(empty.asked == [step, step, step] && empty.gaveWay == 3 && empty.outcome == ErasureChunkSteps.Outcome(rows: 2 * step, through: true))
    }
}

/// An erasure gives way to other requests only while they keep coming.
@Suite struct ErasureYieldTests {
    @Test func pausesAfterAChunkOnlyWhileOthersAreActive() {
        #expect(ErasureYield(pause: .milliseconds(1)) { true }.delay(fixedPause: .zero) == .milliseconds(1))
        #expect(ErasureYield(pause: .milliseconds(1)) { false }.delay(fixedPause: .zero) == .zero)
        #expect(ErasureYield(pause: .zero) { true }.delay(fixedPause: .zero) == .zero)
        // A test's fixed pause between chunks stands, whichever is longer.
        #expect(ErasureYield(pause: .milliseconds(1)) { true }.delay(fixedPause: .milliseconds(200)) == .milliseconds(200))
        #expect(ErasureYield(pause: .milliseconds(1)) { false }.delay(fixedPause: .milliseconds(200)) == .milliseconds(200))
        #expect(ErasureYield.never.delay(fixedPause: .zero) == .zero)
    }

    @Test func theActivityIsARecentRequest() {
        let activity = RequestActivity()
        let now = ContinuousClock.now
        #expect(!activity.heard(within: .seconds(3600), now: now))
        activity.note(at: now - .milliseconds(5))
        #expect(activity.heard(within: ErasureYield.window, now: now))
        #expect(!activity.heard(within: .milliseconds(5), now: now))
        #expect(!activity.heard(within: ErasureYield.window, now: now + .milliseconds(20)))
    }
}

/// What the audit trail's pseudonymisation replaces: values that are one of the subject's
/// identifiers whole, whatever their ASCII case; never a part of a longer value.
@Suite struct AuditPseudonymisationTests {
    let bob = AuditPseudonymisation(identifiers: ["usr_1", "Bob@X.test", "acc_1", "a/b@x.test", ""], pseudonym: "psn_0")

    @Test func wholeValuesAreReplacedNeverPartsOfOne() throws {
        let details = AuditDetailsJSON.text(["staff": "bob@x.test", "note": "jimbob@x.test", "order_ids": "usr_1,usr_2", "account_id": "ACC_1"])
        let out = try #require(bob.pseudonymised(actor: "usr_1", subject: "jimbob@x.test", details: details))
        #expect(out.actor == "psn_0" && out.subject == "jimbob@x.test")
        #expect(out.details == AuditDetailsJSON.text(["staff": "psn_0", "note": "jimbob@x.test", "order_ids": "usr_1,usr_2", "account_id": "psn_0"]))
        // Nothing whole: nothing changes.
        #expect(
            bob.pseudonymised(
                actor: "usr_10", subject: "jimbob@x.test",
                details: AuditDetailsJSON.text(["email": "bob@x.test.example", "id": "xusr_1"])) == nil)
        #expect(bob.pseudonymised(actor: "anonymous", subject: "BOB@x.TEST", details: "{}")?.subject == "psn_0")
    }

    /// The details' JSON escapes a slash: an identifier holding one is still found in them.
    @Test func anIdentifierIsFoundAsTheDetailsWriteIt() {
        let details = AuditDetailsJSON.text(["staff": "a/b@x.test"])
        #expect(details.contains(#"a\/b@x.test"#))
        #expect(bob.pseudonymised(actor: "x", subject: "y", details: details)?.details == AuditDetailsJSON.text(["staff": "psn_0"]))
        #expect(bob.pseudonymised(actor: "x", subject: "y", details: "not json \"usr_1\"") == nil)
    }
}

/// What stands for an erased person: keyed hashes of the user's id and of the email, which only
/// the key gives.
@Suite struct ErasurePseudonymsTests {
    let key = SymmetricKey(data: Data(repeating: 7, count: 32))

    @Test func theKeyedHashesOfTheUserAndOfTheEmail() {
        // HMAC-SHA256 under 32 bytes of 7, as Python's hmac computes it.
        #expect(ErasurePseudonyms.pseudonym(userID: "usr_1", key: key) == "psn_0d893ddd4bae426a")
        #expect(
            ErasurePseudonyms.subjectHash(email: "Bob@X.test", key: key)
                == "hmac-sha256:ab25c54ca52477eef369461ccb828454569b3e06d6c4a34d103c2d4c1e8a37fe")
        #expect(ErasurePseudonyms.pseudonym(userID: "usr_1", key: SymmetricKey(data: Data(repeating: 8, count: 32))) != "psn_0d893ddd4bae426a")
    }

    @Test func aSubjectsIdentifiersAreWhatItsAuditPseudonymisationReplaces() {
        let s = ErasureSubject(
            userID: "usr_1", accountID: "acc_1", email: "bob@x.test", pseudonym: "psn_0", credentialIDs: ["cred_1"], sessionIDs: ["ses_1"],
            deviceIDs: ["dev_1"])
        #expect(s.identifiers == ["usr_1", "bob@x.test", "acc_1", "cred_1", "ses_1", "dev_1"])
        for id in s.identifiers {
            #expect(s.auditPseudonymisation.pseudonymised(actor: id, subject: "x", details: "{}")?.actor == "psn_0")
        }
        #expect(ErasureSubject(userID: "usr_1", accountID: nil, email: "bob@x.test", pseudonym: "psn_0").identifiers == ["usr_1", "bob@x.test"])
    }
}

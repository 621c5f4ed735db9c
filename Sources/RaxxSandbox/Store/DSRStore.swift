import Crypto
import Foundation
import GRDB
import OpenAPIRuntime
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire
import Synchronization

struct NewDSRRequest: Sendable {
    var id: String
    var kind: Components.Schemas.DSRKind
    var email: String
    var ticket: String
    var receivedAt: Date
    var dueOn: String
    var staffUserID: String
    var now: Date
}

/// Where an erasure stands when asked to apply.
enum ErasureStart: Sendable {
    /// Completed before: nothing changes.
    case alreadyCompleted(Components.Schemas.DSRRequest)
    /// The identifiers are gone (now, or by an earlier run): the history chunks come next.
    case erasing
}

/// The outcome of one chunk of an erasure's history.
struct ErasureChunk: Sendable, Equatable {
    /// Rows the chunk went through: deleted, or audit events read (and pseudonymised where they
    /// name the subject).
    var rows: Int
    /// Where the next chunk's audit scan starts.
    var auditCursor: Int64
    /// Nothing is left to do in the history.
    var done: Bool
}

/// Data-subject requests on SQLite: the requests, exports, erasure plans and their execution,
/// receipts. The rules of each table's erasure are `ErasureRule`'s (Domain/ErasureRules.swift);
/// which identifiers stand for the subject, what replaces them and how it is derived,
/// `ErasureSubject`'s, `ErasurePseudonyms`' and `AuditPseudonymisation`'s
/// (Domain/AuditPseudonymisation.swift); the history's chunks, their steps and the pauses between
/// them, `ErasureChunkSizing`'s, `ErasureChunkSteps`' and `ErasureYield`'s (Domain/ErasurePacing.swift).
struct DSRStore: Sendable {
    let writer: StoreWriter
    let mailer: Mailer
    /// The subject of the erasure in progress, decoded once rather than once per chunk.
    private let erasing = DecodedSubject()

    // MARK: Requests

    /// Records a new request (audited), answering it as of `today`; not the staff member's own.
    func open(_ r: NewDSRRequest) async throws -> Components.Schemas.DSRRequest {
        try await writer.write { db in
            let staff = try Self.staffEmail(db, r.staffUserID)
            try DSRStateMachine.checkHandler(subject: r.email, staff: staff)
            try db.execute(
                sql: """
                    INSERT INTO dsr_requests (id, kind, subject, ticket, status, opened_by, received_at, due_on, created_at, updated_at)
                    VALUES (?, ?, ?, ?, \(Components.Schemas.DSRStatus.identityUnverified.sql), ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    r.id, r.kind.rawValue, r.email, r.ticket, staff, r.receivedAt.timeIntervalSince1970, r.dueOn,
                    r.now.timeIntervalSince1970, r.now.timeIntervalSince1970,
                ])
            try Self.audit(
                db, r.id, staffUserID: r.staffUserID, action: .dsrOpened, ticket: r.ticket, now: r.now,
                details: ["kind": r.kind.rawValue, "due_on": r.dueOn])
            mailer.send(
                db,
                Self.notice(
                    to: r.email, request: r.id,
                    """
                    We received your request to \(r.kind == .erasure ? "erase" : "receive a copy of") your personal data \
                    (request \(r.id)). We will answer by \(r.dueOn); first we confirm it is you who asked.
                    """))
            guard let opened = try Self.fetch(db, id: r.id, now: r.now) else { throw ProblemError.internalError }
            return opened
        }
    }

    /// One request, or nil.
    func request(id: String, now: Date) async throws -> Components.Schemas.DSRRequest? {
        try await writer.read { db in try Self.fetch(db, id: id, now: now) }
    }

    /// Every request (with `status`, when given), soonest due first.
    func list(status: Components.Schemas.DSRStatus?, now: Date) async throws -> [Components.Schemas.DSRRequest] {
        try await writer.read { db in
            try DSRRequestRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM dsr_requests WHERE (?1 IS NULL OR status = ?1) ORDER BY due_on, received_at, id
                    """, arguments: [status?.rawValue]
            ).map { $0.api(now: now) }
        }
    }

    /// Applies `change` (the state machine's verdict on the current state) in one transaction,
    /// audited with the staff member and the ticket. Nil when there is no such request.
    func update(id: String, staffUserID: String, now: Date, _ change: @escaping @Sendable (DSRState) throws -> DSRUpdate)
        async throws -> Components.Schemas.DSRRequest?
    {
        try await writer.write { db -> Components.Schemas.DSRRequest? in
            guard let state = try Self.state(db, id: id) else { return nil }
            try Self.checkHandler(db, state, staffUserID: staffUserID)
            let u = try change(state)
            var sets = ["updated_at = :now"]
            var args: [String: (any DatabaseValueConvertible)?] = ["now": now.timeIntervalSince1970, "id": id]
            if let s = u.status { sets.append("status = :status"); args["status"] = s.rawValue }
            if let d = u.dueOn { sets.append("due_on = :due"); args["due"] = d }
            if let r = u.extensionReason { sets.append("extended = 1, extension_reason = :ext"); args["ext"] = r }
            if let m = u.verificationMethod {
                sets.append("verification_method = :method, verified_by = :staff, verified_at = :now")
                args["method"] = m
                args["staff"] = try Self.staffEmail(db, staffUserID)
            }
            if let c = u.closedReason { sets.append("closed_reason = :closed"); args["closed"] = c }
            try db.execute(sql: "UPDATE dsr_requests SET \(sets.joined(separator: ", ")) WHERE id = :id", arguments: StatementArguments(args))
            try Self.audit(db, id, staffUserID: staffUserID, action: u.auditAction, ticket: state.ticket, now: now, details: u.auditDetails)
            // The subject hears of every staff action on their request; an extension with its
            // reason and new date, as Art. 12(3) requires.
            let text: String
            if let reason = u.extensionReason, let due = u.dueOn {
                text = "The answer to your request \(id) is extended to \(due), as the GDPR (Art. 12(3)) allows, because: \(reason)"
            } else if u.verificationMethod != nil {
                text = "We confirmed it is you who asked (request \(id)); we are now preparing the answer."
            } else if let status = u.status, let reason = u.closedReason {
                text = "Your request \(id) was \(status.rawValue): \(reason)"
            } else {
                text = "Your request \(id) was updated by our support staff (\(u.auditAction.rawValue))."
            }
            mailer.send(db, Self.notice(to: state.subject, request: id, text))
            return try Self.fetch(db, id: id, now: now)
        }
    }

    // MARK: Export (Art. 15, 20)

    /// Everything held about the subject of request `id`, once `check` admits the request; the
    /// export is audited in the same transaction (the request completes at `confirmExport`).
    func export(id: String, staffUserID: String, now: Date, check: @escaping @Sendable (DSRState) throws -> Void)
        async throws -> Components.Schemas.DSRExport?
    {
        try await writer.write { db -> Components.Schemas.DSRExport? in
            guard let state = try Self.state(db, id: id) else { return nil }
            try Self.checkHandler(db, state, staffUserID: staffUserID)
            try check(state)
            let subject = try Self.subject(db, email: state.subject)
            let tables = try Self.exportTables(db, subject: subject, email: state.subject)
            var manifest: [Components.Schemas.DSRExportTable] = []
            var payload: [String: [Components.Schemas.DSRExport.TablesPayload.AdditionalPropertiesPayloadPayload]] = [:]
            for (name, rows) in tables {
                let containers = try rows.map {
                    try Components.Schemas.DSRExport.TablesPayload.AdditionalPropertiesPayloadPayload(
                        additionalProperties: OpenAPIObjectContainer(unvalidatedValue: $0))
                }
                payload[name] = containers
                manifest.append(.init(table: name, rows: Int64(containers.count), sha256: try Self.sha256Hex(CanonicalJSON.data(containers))))
            }
            try Self.audit(
                db, id, staffUserID: staffUserID, action: .dsrExported, ticket: state.ticket, now: now,
                details: ["tables": "\(manifest.count)", "rows": "\(manifest.reduce(0) { $0 + $1.rows })"])
            return Components.Schemas.DSRExport(
                manifest: .init(requestId: id, subject: state.subject, generatedAt: RFC3339.string(from: now), tables: manifest),
                tables: .init(additionalProperties: payload))
        }
    }

    /// The export of access request `id` was delivered: the request is completed (audited, the
    /// subject emailed). Refused (`invalid_state`) before an export was made; nil when unknown.
    func confirmExport(id: String, staffUserID: String, now: Date) async throws -> Components.Schemas.DSRRequest? {
        try await writer.write { db -> Components.Schemas.DSRRequest? in
            guard let state = try Self.state(db, id: id) else { return nil }
            try Self.checkHandler(db, state, staffUserID: staffUserID)
            if state.status == .completed { return try Self.fetch(db, id: id, now: now) }
            let exported =
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM audit_events WHERE subject = ? AND action = 'dsr.exported'",
                    arguments: ["dsr:" + id]) == true
            guard state.kind == .access, state.status == .verified, exported else {
                throw ProblemError(
                    409, code: .invalidState, title: "Only an access request whose export was made is completed this way.",
                    detail: "\(id) is \(state.status.rawValue); export it first (raxx-dsr export).")
            }
            try db.execute(
                sql: """
                    UPDATE dsr_requests SET status = \(Components.Schemas.DSRStatus.completed.sql), completed_at = ?1, updated_at = ?1 WHERE id = ?2
                    """, arguments: [now.timeIntervalSince1970, id])
            try Self.audit(db, id, staffUserID: staffUserID, action: .dsrExportDelivered, ticket: state.ticket, now: now)
            mailer.send(
                db,
                Self.notice(
                    to: state.subject, request: id,
                    """
                    The copy of your personal data (request \(id)) is ready, and our support staff send it to you encrypted: \
                    your request is complete.
                    """))
            return try Self.fetch(db, id: id, now: now)
        }
    }

    /// Every table holding the subject's personal data, as rows of plain values: what each erasure
    /// rule exports, in the rules' order.
    static func exportTables(_ db: Database, subject: ErasureSubject?, email: String) throws -> [(String, [[String: (any Sendable)?]])] {
        let arguments = try ruleArguments(subject, email: email)
        var tables: [(String, [[String: (any Sendable)?]])] = []
        for rule in ErasureRule.allCases {
            guard let export = rule.export else { continue }
            var rows = try Row.fetchAll(db, sql: export.sql, arguments: arguments).map(plain)
            if rule == .auditEvents {
                // The export goes to the subject: staff members appear by their role.
                let staff = try AuditTrailStore.staffIDs(db), user = subject?.userID ?? ""
                rows = rows.map { row in
                    var row = row
                    let details = ((row["details"] ?? nil) as? String).flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) } ?? [:]
                    let seen = AuditTrailStore.asSeenBySubject(actor: ((row["actor"] ?? nil) as? String) ?? "", details: details, subject: user, staff: staff)
                    row["actor"] = seen.actor
                    if !seen.details.isEmpty, let json = try? JSONEncoder.sorted.encode(seen.details) { row["details"] = String(decoding: json, as: UTF8.self) }
                    return row
                }
            }
            tables.append((export.name, rows))
        }
        return tables
    }

    /// The named arguments the erasure rules' statements take (see `ErasureRule`), for `subject`
    /// (nil: "" for its ids, which no row has).
    static func ruleArguments(_ subject: ErasureSubject?, email: String, subjectHash: String? = nil) throws -> StatementArguments {
        let identifiers = String(decoding: try JSONEncoder().encode(subject?.identifiers ?? []), as: UTF8.self)
        return StatementArguments(
            [
                "user": subject?.userID ?? "", "account": subject?.accountID ?? "", "email": email,
                "email_hash": AuthStore.emailHash(email), "pseudonym": subject?.pseudonym ?? "", "identifiers": identifiers,
                "subject_hash": subjectHash ?? "",
            ] as [String: (any DatabaseValueConvertible)?])
    }

    /// A row as plain JSON values: times (columns ending `_at`) as RFC 3339, blobs as base64url.
    static func plain(_ row: Row) -> [String: (any Sendable)?] {
        var out: [String: (any Sendable)?] = [:]
        for (column, value) in row {
            switch value.storage {
            case .null: out[column] = .some(nil)
            case .int64(let i): out[column] = Int(i)
            case .double(let d):
                out[column] = column.hasSuffix("_at") ? RFC3339.string(from: Date(timeIntervalSince1970: d)) : d
            case .string(let s): out[column] = s
            case .blob(let b): out[column] = Base64URL.encode(b)
            }
        }
        return out
    }

    static func sha256Hex(_ data: Data) -> String { ASCIIHex.lowercase(SHA256.hash(data: data)) }

    // MARK: Erasure (Art. 17)

    /// The user and account under `email`, with their identifiers and pseudonym, or nil.
    static func subject(_ db: Database, email: String) throws -> ErasureSubject? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT users.id AS user_id, accounts.id AS account_id, users.email FROM users LEFT JOIN accounts ON accounts.user_id = users.id
                    WHERE users.email = ?
                    """, arguments: [email])
        else { return nil }
        let user: String = row["user_id"]
        let keys = try DSRKeys.load(db)
        return ErasureSubject(
            userID: user, accountID: row["account_id"], email: row["email"], pseudonym: ErasurePseudonyms.pseudonym(userID: user, key: keys.pseudonymKey),
            credentialIDs: try String.fetchAll(db, sql: "SELECT id FROM passkeys WHERE user_id = ? ORDER BY id", arguments: [user]),
            sessionIDs: try String.fetchAll(db, sql: "SELECT id FROM sessions WHERE user_id = ? ORDER BY id", arguments: [user]),
            deviceIDs: try String.fetchAll(db, sql: "SELECT id FROM device_tokens WHERE user_id = ? ORDER BY id", arguments: [user]))
    }

    /// How many rows `rule` touches for `subject` now (`arguments`: `ruleArguments` of the subject).
    static func count(_ db: Database, _ rule: ErasureRule, subject: ErasureSubject?, arguments: StatementArguments) throws -> Int64 {
        guard subject != nil || rule.countsWithoutSubject else { return 0 }
        return try Int64.fetchOne(db.cachedStatement(sql: rule.countSQL), arguments: arguments) ?? 0
    }

    /// The plan for request `state` over the current data (its hash is `ErasurePlanning`'s), and
    /// the subject it was made for.
    static func computePlan(_ db: Database, state: DSRState, rules: [ErasureRule], now: Date) throws
        -> (plan: Components.Schemas.ErasurePlan, subject: ErasureSubject?)
    {
        let subject = try Self.subject(db, email: state.subject)
        let arguments = try ruleArguments(subject, email: state.subject)
        let items = try rules.map { rule in
            Components.Schemas.ErasureItem(
                table: rule.table, what: rule.what, rows: try count(db, rule, subject: subject, arguments: arguments),
                action: rule.action, ground: rule.ground, retention: rule.retention)
        }
        let account = subject?.accountID ?? ""
        let facts = ErasurePlanning.Facts(
            cashTicks: try Int64.fetchOne(db, sql: "SELECT cash_ticks FROM accounts WHERE id = ?", arguments: [account]),
            ordersUpdated: try Double.fetchOne(db, sql: "SELECT MAX(updated_at) FROM orders WHERE account_id = ?", arguments: [account]),
            positionsUpdated: try Double.fetchOne(db, sql: "SELECT MAX(updated_at) FROM positions WHERE account_id = ?", arguments: [account]),
            lastFill: try Double.fetchOne(db, sql: "SELECT MAX(filled_at) FROM fills WHERE account_id = ?", arguments: [account]))
        return (try ErasurePlanning.plan(requestID: state.id, items: items, facts: facts, rules: rules, now: now), subject)
    }

    /// The erasure plan of request `id` under `rules`, once `check` admits it; the request is
    /// `planned` with this plan's hash.
    func plan(id: String, rules: [ErasureRule], staffUserID: String, now: Date, check: @escaping @Sendable (DSRState) throws -> Void)
        async throws -> Components.Schemas.ErasurePlan?
    {
        try await writer.write { db -> Components.Schemas.ErasurePlan? in
            guard let state = try Self.state(db, id: id) else { return nil }
            try Self.checkHandler(db, state, staffUserID: staffUserID)
            try check(state)
            let plan = try Self.computePlan(db, state: state, rules: rules, now: now).plan
            let items = String(
                decoding: try JSONEncoder.sorted.encode(
                    plan.items.map {
                        Components.Schemas.DSRReceiptItem(table: $0.table, action: $0.action, rows: $0.rows)
                    }), as: UTF8.self)
            try db.execute(
                sql: "UPDATE dsr_requests SET status = \(Components.Schemas.DSRStatus.planned.sql), plan_hash = ?, plan = ?, updated_at = ? WHERE id = ?",
                arguments: [plan.planHash, items, now.timeIntervalSince1970, id])
            try Self.audit(
                db, id, staffUserID: staffUserID, action: .dsrPlanned, ticket: state.ticket, now: now,
                details: ["plan_hash": plan.planHash])
            return plan
        }
    }

    /// The plan of request `id` as it would be made now, in a read: nothing is recorded.
    func currentPlan(id: String, rules: [ErasureRule], now: Date, check: @escaping @Sendable (DSRState) throws -> Void)
        async throws -> Components.Schemas.ErasurePlan?
    {
        try await writer.read { db -> Components.Schemas.ErasurePlan? in
            guard let state = try Self.state(db, id: id) else { return nil }
            try check(state)
            return try Self.computePlan(db, state: state, rules: rules, now: now).plan
        }
    }

    /// Starts (or resumes) the erasure of request `id` with the plan `planHash`, spending the
    /// step-up grant bound to it: the first transaction (access and identifiers). What may be
    /// applied is `ErasurePlanning.judgeApply`'s to say, once `DSRStateMachine.checkHandler` has
    /// refused a staff member their own; its refusals are thrown (a step-up's audited).
    func beginErasure(id: String, planHash: String, grant: String?, rules: [ErasureRule], staffUserID: String, now: Date)
        async throws -> ErasureStart
    {
        try await writer.write { db -> ErasureStart in
            guard let state = try Self.state(db, id: id) else { throw ProblemError.notFound("No data-subject request \(id).") }
            // Before the step-up is spent: the staff member's own erasure is another's to apply.
            try Self.checkHandler(db, state, staffUserID: staffUserID)
            var subject: ErasureSubject? = nil
            let start = try ErasurePlanning.judgeApply(
                state, planHash: planHash, grant: grant, staffUserID: staffUserID, rules: rules, now: now,
                current: {
                    let current = try Self.computePlan(db, state: state, rules: rules, now: now)
                    subject = current.subject
                    return current.plan
                },
                spend: { grantHash, action in
                    try StepUpGrants.consume(db, grantHash: grantHash, actionHash: action, userID: staffUserID, now: now)
                })
            switch start {
            case .alreadyCompleted:
                return .alreadyCompleted(try Self.fetch(db, id: id, now: now)!)
            case .resume:
                try Self.audit(
                    db, id, staffUserID: staffUserID, action: .dsrErasureResumed, ticket: state.ticket, now: now,
                    details: ["plan_hash": planHash])
                return .erasing
            case .start:
                break
            }
            // The first transaction: the subject's access and identifiers go at once.
            let saved = String(decoding: try JSONEncoder.sorted.encode(subject), as: UTF8.self)
            if let s = subject {
                let arguments = try Self.ruleArguments(s, email: s.email)
                for rule in rules {
                    for sql in rule.identifierStatements { try db.execute(sql: sql, arguments: arguments) }
                }
            }
            try db.execute(
                sql: "UPDATE dsr_requests SET status = \(Components.Schemas.DSRStatus.erasing.sql), erasure_identifiers = ?, updated_at = ? WHERE id = ?",
                arguments: [subject == nil ? nil : saved, now.timeIntervalSince1970, id])
            try Self.audit(
                db, id, staffUserID: staffUserID, action: .dsrErasureStarted, ticket: state.ticket, now: now,
                details: ["plan_hash": planHash])
            return .erasing
        }
    }

    /// The history of a started erasure, in chunks of one transaction each, sized by `sizing` (at
    /// most its rows, about its time each), with `pause` between them. The chunks are chained on
    /// the writer's queue: a
    /// chunk that ends enqueues the next one behind whatever writes came meanwhile (other accounts'
    /// orders go first), and no chunk waits for another thread to wake up and send it.
    func eraseHistory(id: String, rules: [ErasureRule], sizing: ErasureChunkSizing, pause: Duration, yield: ErasureYield) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            ErasureRun(
                writer: writer, erasing: erasing, id: id, rules: rules, sizing: sizing, pause: pause, yield: yield,
                continuation: continuation
            ).next()
        }
    }

    /// One chunk of the history (one transaction of at most `limit` rows), in the first history
    /// rule that has rows left. Its steps, when it ends and when it gives way (`othersWaiting`,
    /// `giveWay`: `GiveWay.toReadyThreads` unless a test counts the calls) are
    /// `ErasureChunkSteps`'; each step here is one statement.
    static func eraseChunk(
        _ db: Database, erasing: DecodedSubject, id: String, rules: [ErasureRule], auditCursor: Int64,
        limit: Int, othersWaiting: () -> Bool = { false },
        giveWay: () -> Void = GiveWay.toReadyThreads
    ) throws -> ErasureChunk {
        guard
            let text = try String.fetchOne(
                db.cachedStatement(sql: "SELECT erasure_identifiers FROM dsr_requests WHERE id = ? AND status = \(Components.Schemas.DSRStatus.erasing.sql)"),
                arguments: [id]),
            let s = erasing.subject(from: text)
        else {
            return ErasureChunk(rows: 0, auditCursor: auditCursor, done: true)
        }
        let account = s.accountID ?? ""
        for rule in rules {
            switch rule.historyStep {
            case nil:
                continue
            case .pseudonymiseAuditTrail:
                return try Self.pseudonymiseAudit(
                    db, subject: s, after: auditCursor, limit: limit, othersWaiting: othersWaiting,
                    giveWay: giveWay)
            case .delete(let sql):
                // Cached: an erasure runs these statements thousands of times.
                let statement = try db.cachedStatement(sql: sql)
                let steps = try ErasureChunkSteps.run(
                    limit: limit, givingWayAfterEmptySteps: false, othersWaiting: othersWaiting, giveWay: giveWay
                ) { asked in
                    try statement.execute(arguments: ["user": s.userID, "account": account, "limit": asked])
                    return db.changesCount
                }
                // This table through or not, the next chunk goes on (with the next table once it is).
                if steps.rows > 0 { return ErasureChunk(rows: steps.rows, auditCursor: auditCursor, done: false) }
            }
        }
        return ErasureChunk(rows: 0, auditCursor: auditCursor, done: true)
    }

    /// Replaces the subject's identifiers in the next `limit` audit events after `cursor` (where a
    /// value is one whole, as `AuditPseudonymisation` says), in the steps of `ErasureChunkSteps`
    /// as `eraseChunk` deletes, a read of events each, giving way after every one. The chunk's
    /// rows are the events it read: each is looked through, whether it names the subject or not.
    static func pseudonymiseAudit(
        _ db: Database, subject s: ErasureSubject, after cursor: Int64, limit: Int,
        othersWaiting: () -> Bool = { false }, giveWay: () -> Void = {}
    ) throws -> ErasureChunk {
        let pseudonymisation = s.auditPseudonymisation
        let read = try db.cachedStatement(sql: "SELECT seq, actor, subject, details FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?")
        let update = try db.cachedStatement(sql: "UPDATE audit_events SET actor = ?, subject = ?, details = ? WHERE seq = ?")
        var last = cursor
        let steps = try ErasureChunkSteps.run(
            limit: limit, givingWayAfterEmptySteps: true, othersWaiting: othersWaiting, giveWay: giveWay
        ) { asked in
            // Read in place by position (ColumnRow): no `Row` made per step of a million-row trail.
            let events = try read.allRows(arguments: [last, asked]) { row in
                try (
                    seq: row.decode(Int64.self, atIndex: 0), actor: row.decode(String.self, atIndex: 1),
                    subject: row.decode(String.self, atIndex: 2), details: row.decode(String.self, atIndex: 3)
                )
            }
            for event in events {
                if let p = pseudonymisation.pseudonymised(actor: event.actor, subject: event.subject, details: event.details) {
                    try update.execute(arguments: [p.actor, p.subject, p.details, event.seq])
                }
            }
            last = events.last?.seq ?? last
            return events.count
        }
        // The history is done once the trail is through.
        return ErasureChunk(rows: steps.rows, auditCursor: last, done: steps.through)
    }

    /// The last transaction: the account and the user go, the requests' subject becomes its keyed
    /// hash, the receipt is signed and the request completed (audited). Idempotent.
    func completeErasure(id: String, rules: [ErasureRule], staffUserID: String, now: Date) async throws -> Components.Schemas.DSRRequest {
        try await writer.write { db -> Components.Schemas.DSRRequest in
            guard let state = try Self.state(db, id: id) else { throw ProblemError.notFound("No data-subject request \(id).") }
            if state.status == .completed { return try Self.fetch(db, id: id, now: now)! }
            guard state.status == .erasing else { throw ProblemError.internalError }
            let keys = try DSRKeys.load(db)
            let saved = try String.fetchOne(db, sql: "SELECT erasure_identifiers FROM dsr_requests WHERE id = ?", arguments: [id])
            let subject = try saved.flatMap { try JSONDecoder().decode(ErasureSubject.self, from: Data($0.utf8)) }
            let email = subject?.email ?? state.subject
            let hashed = ErasurePseudonyms.subjectHash(email: email, key: keys.pseudonymKey)
            let arguments = try Self.ruleArguments(subject, email: email, subjectHash: hashed)
            for rule in rules {
                for sql in rule.finalStatements { try db.execute(sql: sql, arguments: arguments) }
            }
            // The last email to the address, sent with the change that forgets it.
            mailer.send(
                db,
                Self.notice(
                    to: email, request: id,
                    """
                    Your personal data was erased (request \(id)). What the law obliges us to keep is kept under a pseudonym, \
                    for the periods the receipt names; nothing links it to this address any more.
                    """))
            let itemsJSON = try String.fetchOne(db, sql: "SELECT plan FROM dsr_requests WHERE id = ?", arguments: [id]) ?? "[]"
            let items = try JSONDecoder().decode([Components.Schemas.DSRReceiptItem].self, from: Data(itemsJSON.utf8))
            let body = Components.Schemas.DSRReceiptBody(
                requestId: id, subjectHash: hashed, planHash: state.planHash ?? "", items: items,
                completedAt: RFC3339.string(from: now))
            let bodyJSON = try CanonicalJSON.data(body)
            let signature = try keys.signing.signature(for: bodyJSON)
            try db.execute(
                sql: """
                    UPDATE dsr_requests SET status = \(Components.Schemas.DSRStatus.completed.sql), completed_at = ?1, updated_at = ?1,
                    erasure_identifiers = NULL,
                           receipt = ?2, receipt_signature = ?3 WHERE id = ?4
                    """, arguments: [now.timeIntervalSince1970, String(decoding: bodyJSON, as: UTF8.self), Base64URL.encode(signature), id])
            try Self.audit(
                db, id, staffUserID: staffUserID, action: .dsrErasureCompleted, ticket: state.ticket, now: now,
                details: ["plan_hash": state.planHash ?? ""])
            return try Self.fetch(db, id: id, now: now)!
        }
    }

    // MARK: Receipts

    /// The signed receipt of a completed erasure, or nil.
    func receipt(id: String) async throws -> Components.Schemas.DSRReceipt? {
        try await writer.write { db -> Components.Schemas.DSRReceipt? in
            guard let row = try Row.fetchOne(db, sql: "SELECT receipt, receipt_signature FROM dsr_requests WHERE id = ?", arguments: [id]),
                let text = row["receipt"] as String?, let signature = row["receipt_signature"] as String?
            else { return nil }
            let body = try JSONDecoder().decode(Components.Schemas.DSRReceiptBody.self, from: Data(text.utf8))
            return .init(receipt: body, algorithm: .ed25519, keyId: try DSRKeys.load(db).keyID, signature: signature)
        }
    }

    /// The receipt signing key's public half.
    func receiptKey() async throws -> Components.Schemas.DSRReceiptKey {
        try await writer.read { db in
            let keys = try DSRKeys.load(db)
            return .init(algorithm: .ed25519, keyId: keys.keyID, publicKey: Base64URL.encode(keys.signing.publicKey.rawRepresentation))
        }
    }

    // MARK: Rows

    /// An email to a data subject about their request.
    static func notice(to email: String, request id: String, _ text: String) -> Mail {
        Mail(to: email, subject: "Your Raxx data request \(id)", body: text + "\n\nReply to this email with any question about it.")
    }

    /// Refuses staff member `staffUserID` a step of their own request (`DSRStateMachine.checkHandler`).
    static func checkHandler(_ db: Database, _ state: DSRState, staffUserID: String) throws {
        try DSRStateMachine.checkHandler(subject: state.subject, staff: staffEmail(db, staffUserID))
    }

    static func staffEmail(_ db: Database, _ userID: String) throws -> String {
        try String.fetchOne(db, sql: "SELECT email FROM users WHERE id = ?", arguments: [userID]) ?? userID
    }

    /// Audits a DSR action: the subject is the request (`dsr:ID`, never the person), the actor the
    /// staff member, the details carry the ticket.
    static func audit(
        _ db: Database, _ id: String, staffUserID: String, action: AuditAction, ticket: String, now: Date,
        details: [String: String] = [:]
    ) throws {
        var details = details
        details["ticket"] = ticket
        details["staff"] = try staffEmail(db, staffUserID)
        try SandboxDatabase.audit(db, AuditEntry(at: now, actor: staffUserID, action: action, subject: "dsr:" + id, details: details))
    }

    static func state(_ db: Database, id: String) throws -> DSRState? {
        try DSRRequestRecord.fetchOne(db, key: id)?.state
    }

    static func fetch(_ db: Database, id: String, now: Date) throws -> Components.Schemas.DSRRequest? {
        try DSRRequestRecord.fetchOne(db, key: id)?.api(now: now)
    }
}

/// The sandbox's DSR keys: the Ed25519 key receipts are signed with, and the HMAC key behind
/// pseudonyms and subject hashes (`ErasurePseudonyms`). Kept in the database; made when
/// `SandboxDatabase` opens one that has none, so that a read transaction finds them.
struct DSRKeys {
    let signing: Curve25519.Signing.PrivateKey
    let pseudonymKey: SymmetricKey

    /// The keys, made first when there are none (which takes a write transaction).
    static func load(_ db: Database) throws -> DSRKeys {
        if let row = try Row.fetchOne(db, sql: "SELECT receipt_key, pseudonym_key FROM dsr_keys WHERE id = 1") {
            return DSRKeys(
                signing: try Curve25519.Signing.PrivateKey(rawRepresentation: row["receipt_key"] as Data),
                pseudonymKey: SymmetricKey(data: row["pseudonym_key"] as Data))
        }
        let keys = DSRKeys(signing: Curve25519.Signing.PrivateKey(), pseudonymKey: SymmetricKey(size: .bits256))
        try db.execute(
            sql: "INSERT INTO dsr_keys (id, receipt_key, pseudonym_key, created_at) VALUES (1, ?, ?, ?)",
            arguments: [
                keys.signing.rawRepresentation, keys.pseudonymKey.withUnsafeBytes { Data($0) },
                Date().timeIntervalSince1970,
            ])
        return keys
    }

    /// base64url SHA-256 of the public key, first 16 characters.
    var keyID: String { String(Base64URL.encode(SHA256.hash(data: signing.publicKey.rawRepresentation)).prefix(16)) }
}

/// The last erasure subject decoded, by its saved text. Every chunk of an erasure reads the saved
/// identifiers (that read is also the check that the erasure is still on) and decodes them only
/// when they differ from the last chunk's.
final class DecodedSubject: Sendable {
    private let last = Mutex<(text: String, subject: ErasureSubject)?>(nil)

    func subject(from text: String) -> ErasureSubject? {
        if let hit = last.withLock({ $0?.text == text ? $0?.subject : nil }) { return hit }
        guard let subject = try? JSONDecoder().decode(ErasureSubject.self, from: Data(text.utf8)) else { return nil }
        last.withLock { $0 = (text, subject) }
        return subject
    }
}

/// An erasure's history under way: each chunk runs on the writer's queue and, once committed,
/// enqueues the next. Its state is touched by one chunk at a time (each is enqueued by the one
/// before it has finished), so its mutex is never contended.
private final class ErasureRun: Sendable {
    /// Its chunks go to the writer itself, uncounted; the stores' writes that wait for the lock
    /// end a chunk early.
    let writer: StoreWriter
    let erasing: DecodedSubject
    let id: String
    let rules: [ErasureRule]
    let pause: Duration
    let yield: ErasureYield
    let continuation: CheckedContinuation<Void, any Error>
    private let state: Mutex<State>

    private struct State {
        var sizing: ErasureChunkSizing
        var cursor: Int64 = 0
        var started = ContinuousClock.now
    }

    init(
        writer: StoreWriter, erasing: DecodedSubject, id: String, rules: [ErasureRule], sizing: ErasureChunkSizing,
        pause: Duration, yield: ErasureYield, continuation: CheckedContinuation<Void, any Error>
    ) {
        self.writer = writer
        self.erasing = erasing
        self.id = id
        self.rules = rules
        self.state = Mutex(State(sizing: sizing))
        self.pause = pause
        self.yield = yield
        self.continuation = continuation
    }

    func next() {
        writer.base.asyncWrite(
            { [self] db -> ErasureChunk in
                let (cursor, limit): (Int64, Int) = state.withLock { state in
                    state.started = ContinuousClock.now
                    return (state.cursor, state.sizing.rows)
                }
                return try DSRStore.eraseChunk(
                    db, erasing: erasing, id: id, rules: rules, auditCursor: cursor, limit: limit,
                    othersWaiting: { writer.waiting.any })
            },
            completion: { [self] _, result in
                // On the writer's queue, right after the chunk's commit: the time it held the lock.
                switch result {
                case .failure(let error):
                    continuation.resume(throwing: error)
                case .success(let chunk):
                    state.withLock { state in
                        state.sizing.record(rows: chunk.rows, took: ContinuousClock.now - state.started)
                        state.cursor = chunk.auditCursor
                    }
                    let delay = yield.delay(fixedPause: pause)
                    if chunk.done {
                        continuation.resume()
                    } else if delay > .zero {
                        DispatchQueue.global().asyncAfter(deadline: .now() + delay / .seconds(1)) { self.next() }
                    } else {
                        next()
                    }
                }
            })
    }
}

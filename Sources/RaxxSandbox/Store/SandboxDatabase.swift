import Foundation
import GRDB
import RaxxSQLite

/// The sandbox's state in SQLite (the app database): it owns the database writer and runs the
/// migrator on open; migrations are append-only: never edit a registered one, add the next.
/// Handlers reach it only through the stores (`stores`), one transaction a method.
public final class SandboxDatabase: Sendable {
    public let writer: any DatabaseWriter
    /// Signalled when a transaction that wrote an event for a user commits (long polls wait on it).
    public let notifier: EventNotifier
    /// The stores' writes waiting for the write lock (an erasure's chunk gives way to them).
    let waitingWrites = WaitingWrites()
    /// Where the platform's email goes (a Maildir): one-time codes and notices.
    public let mailer: Mailer
    /// The Maildir is a temporary one of this database's own (a database in memory), removed with it.
    private let ownsMailer: Bool
    /// The key of the registration codes' hashes, in memory only (`AuthStore.codeKey`).
    let codeKey = CodeKey()

    /// Pages in the log that call for a checkpoint (`WALCheckpointer`): 8,000 (32 MiB of 4 KiB
    /// pages), where SQLite's automatic one uses 1,000. An erasure commits a chunk every millisecond
    /// or two, and each commit logs again the index pages it touched (a fill's id, order and time
    /// indexes each put its row on a page of their own): checkpointed every 1,000 pages, the same
    /// pages were copied into the database file, and synced, over and over, on the other core.
    /// `Scripts/bench dsr` (release, 2 cores, another account ordering throughout), 1,000 pages
    /// against 8,000: the erasure 8.47-8.62 s against 7.75-8.09 s (floor 5.4-6.1 s), the other
    /// account's p99 during it 1.53-2.17x against 1.45-1.59x its p99 without; 4,000 and 16,000
    /// pages fell between.
    static let checkpointThreshold: Int32 = 8000

    /// How much of the database file each connection reads through a memory map (1 GiB; SQLite
    /// reads the rest, if any, as it would without). The writer's page cache holds 32 MiB, and an
    /// erasure walks the indexes of a million fills: each page it reads again was a `pread` system
    /// call and a copy, 730,000 of them during one erasure. Mapped, the file's pages are read in
    /// place, and 220,000 calls were left (those of the log). `Scripts/bench dsr` (release, 2
    /// cores, another account ordering throughout), 4 alternating pairs: the erasure 6.96-7.73 s
    /// against 7.22-8.03 s, the other account's p99 during it 1.48-1.89x against 1.22-1.54x its
    /// p99 without (both within the goal of 2x). The full refresh's pages came as fast either way.
    /// The mapped pages are the page cache's: they count in the sandbox's resident size, not in
    /// the memory it allocates.
    static let memoryMapSize = 1 << 30

    /// Opens (creating if needed) the database at `path`, or an in-memory one for `:memory:`.
    /// Email goes to `mailDirectory`; by default a `mail` folder beside the database (a temporary
    /// one for a database in memory).
    public init(path: String, mailDirectory: String? = nil) throws {
        mailer =
            mailDirectory.map(Mailer.init(directory:))
            ?? (path == ":memory:"
                ? Mailer.temporary() : Mailer(directory: URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("mail").path))
        ownsMailer = mailDirectory == nil && path == ":memory:"
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(5)
        // The log is checkpointed off the writer (see WALCheckpointer); the pool's configuration
        // keeps the checkpointer alive as long as the pool's connections.
        let checkpointer = path == ":memory:" ? nil : WALCheckpointer(path: path, threshold: Self.checkpointThreshold)
        let notifier = EventNotifier()
        self.notifier = notifier
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA mmap_size = \(Self.memoryMapSize)")
            guard !db.configuration.readonly else { return }
            checkpointer?.install(on: db)
            db.add(transactionObserver: EventCommits(notifier: notifier), extent: .databaseLifetime)
        }
        if path == ":memory:" {
            writer = try DatabaseQueue(configuration: config)
        } else {
            try Self.keepPrivate(path)
            let pool = try DatabasePool(path: path, configuration: config)
            // The one writer keeps 32 MiB of pages (SQLite's default is 2 MiB): an erasure or a
            // seed walks far more of the indexes than that, and each page read again is a system
            // call while other accounts wait for the write lock.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA cache_size = -32768") }
            writer = pool
        }
        try Self.migrator.migrate(writer)
        // The DSR keys exist from the start: a request's plan is also read in a read transaction,
        // which could not make them.
        try writer.write { db in _ = try DSRKeys.load(db) }
    }

    deinit {
        // A database in memory ends with its process or its last reference: so does its mail.
        if ownsMailer { try? FileManager.default.removeItem(atPath: mailer.directory) }
    }

    /// The database holds the receipt-signing key and the pseudonym key: anyone who reads it can
    /// forge a receipt or re-identify an erased email. So it is made 0600 whatever the umask:
    /// created so when new, narrowed to it when an older sandbox left it wider, with the logs
    /// beside it (SQLite gives a new -wal and -shm the main file's mode).
    static func keepPrivate(_ path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DatabaseError(resultCode: .SQLITE_CANTOPEN, message: String(cString: strerror(errno))) }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else { throw DatabaseError(resultCode: .SQLITE_PERM, message: String(cString: strerror(errno))) }
        for log in ["-wal", "-shm", "-journal"] { _ = chmod(path + log, 0o600) }  // absent ones stay absent
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: accounts, passkeys, sessions, trading, change log, events, devices, audit") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (
                        id TEXT PRIMARY KEY,
                        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
                        display_name TEXT,
                        handle BLOB NOT NULL UNIQUE,          -- the WebAuthn user handle
                        staff INTEGER NOT NULL DEFAULT 0,
                        created_at REAL NOT NULL
                    );
                    CREATE TABLE accounts (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
                        mode TEXT NOT NULL DEFAULT 'paper' CHECK (mode IN ('paper', 'live')),
                        cash_ticks INTEGER NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE TABLE passkeys (
                        id TEXT PRIMARY KEY,                  -- credential ID, base64url
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        public_key BLOB NOT NULL,             -- COSE key
                        algorithm INTEGER NOT NULL,
                        sign_count INTEGER NOT NULL DEFAULT 0,
                        transports TEXT,
                        created_at REAL NOT NULL,
                        last_used_at REAL
                    );
                    CREATE INDEX passkeys_user ON passkeys(user_id);
                    CREATE TABLE challenges (
                        challenge TEXT PRIMARY KEY,           -- base64url
                        purpose TEXT NOT NULL CHECK (purpose IN ('register', 'login', 'step_up')),
                        user_id TEXT REFERENCES users(id) ON DELETE CASCADE,
                        action_hash TEXT,
                        expires_at REAL NOT NULL,
                        used_at REAL
                    );
                    CREATE TABLE sessions (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        access_token_hash TEXT NOT NULL UNIQUE,
                        access_expires_at REAL NOT NULL,
                        renewal_token_hash TEXT NOT NULL UNIQUE,
                        created_at REAL NOT NULL,
                        expires_at REAL NOT NULL,
                        revoked_at REAL
                    );
                    CREATE INDEX sessions_user ON sessions(user_id);
                    CREATE TABLE step_up_grants (
                        grant_hash TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        action_hash TEXT NOT NULL,
                        expires_at REAL NOT NULL,
                        used_at REAL
                    );
                    CREATE TABLE positions (
                        id TEXT PRIMARY KEY,
                        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                        symbol TEXT NOT NULL,
                        qty INTEGER NOT NULL,
                        avg_price_ticks INTEGER NOT NULL,
                        updated_at REAL NOT NULL,
                        UNIQUE (account_id, symbol)
                    );
                    CREATE TABLE orders (
                        id TEXT PRIMARY KEY,
                        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                        client_order_id TEXT NOT NULL,
                        symbol TEXT NOT NULL,
                        side TEXT NOT NULL CHECK (side IN ('buy', 'sell')),
                        qty INTEGER NOT NULL CHECK (qty > 0),
                        type TEXT NOT NULL CHECK (type IN ('market', 'limit')),
                        limit_price_ticks INTEGER,
                        tif TEXT NOT NULL CHECK (tif IN ('day', 'gtc')),
                        status TEXT NOT NULL,
                        filled_qty INTEGER NOT NULL DEFAULT 0,
                        avg_fill_price_ticks INTEGER,
                        reject_code TEXT,
                        mode TEXT NOT NULL DEFAULT 'paper',
                        not_after REAL,
                        request_hash TEXT,                    -- to tell an idempotent retry from a conflict
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        UNIQUE (account_id, client_order_id)
                    );
                    CREATE INDEX orders_account_status ON orders(account_id, status);
                    CREATE TABLE fills (
                        id TEXT PRIMARY KEY,
                        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                        order_id TEXT NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
                        symbol TEXT NOT NULL,
                        side TEXT NOT NULL,
                        qty INTEGER NOT NULL,
                        price_ticks INTEGER NOT NULL,
                        filled_at REAL NOT NULL
                    );
                    CREATE INDEX fills_order ON fills(order_id);
                    CREATE INDEX fills_account ON fills(account_id);
                    -- Every insert, update and delete on positions, fills and orders, in order.
                    CREATE TABLE change_log (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        account_id TEXT NOT NULL,
                        entity TEXT NOT NULL CHECK (entity IN ('position', 'fill', 'order')),
                        entity_id TEXT NOT NULL,
                        op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
                        at REAL NOT NULL
                    );
                    CREATE INDEX change_log_account_seq ON change_log(account_id, seq);
                    CREATE TABLE events (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        type TEXT NOT NULL CHECK (type IN ('fill_confirmed', 'order_rejected', 'session_expiring', 'security_alert')),
                        title TEXT NOT NULL,
                        body TEXT,
                        order_id TEXT,
                        created_at REAL NOT NULL
                    );
                    CREATE INDEX events_user_seq ON events(user_id, seq);
                    CREATE TABLE device_tokens (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        token TEXT NOT NULL,
                        environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                        label TEXT,
                        alerts TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        revoked_at REAL,
                        UNIQUE (user_id, token)
                    );
                    -- Append-only: who did what to which subject, for every money or permission change.
                    CREATE TABLE audit_events (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        at REAL NOT NULL,
                        actor TEXT NOT NULL,
                        action TEXT NOT NULL,
                        subject TEXT NOT NULL,
                        details TEXT NOT NULL DEFAULT '{}'
                    );
                    CREATE TABLE dsr_requests (
                        id TEXT PRIMARY KEY,
                        kind TEXT NOT NULL CHECK (kind IN ('export', 'erasure')),
                        subject TEXT NOT NULL,
                        status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
                        ticket TEXT,
                        staff_user_id TEXT,
                        created_at REAL NOT NULL,
                        completed_at REAL,
                        result TEXT
                    );
                    """)
        }
        migrator.registerMigration("v2: pending registrations on challenges") { db in
            // A registration's account is created only when its passkey is verified; until then the
            // challenge carries the email, display name and user handle it was offered for.
            try db.execute(
                sql: """
                    ALTER TABLE challenges ADD COLUMN email TEXT;
                    ALTER TABLE challenges ADD COLUMN display_name TEXT;
                    ALTER TABLE challenges ADD COLUMN user_handle BLOB;
                    """)
        }
        migrator.registerMigration("v3: compacted change log and sync horizon") { db in
            // Keep only each entity's latest change; from now on ChangeLog.record keeps it so.
            try db.execute(
                sql: """
                    DELETE FROM change_log WHERE seq NOT IN (SELECT MAX(seq) FROM change_log GROUP BY entity, entity_id);
                    CREATE UNIQUE INDEX change_log_entity ON change_log(entity, entity_id);
                    CREATE INDEX change_log_tombstones ON change_log(op, at);
                    CREATE TABLE sync_meta (id INTEGER PRIMARY KEY CHECK (id = 1), horizon INTEGER NOT NULL DEFAULT 0);
                    INSERT INTO sync_meta (id, horizon) VALUES (1, 0);
                    CREATE INDEX fills_account_time ON fills(account_id, filled_at);
                    """)
        }
        migrator.registerMigration("v4: registrations remember the session that asked") { db in
            // Adding a passkey to an account that has one needs that account's session, at options
            // time and again at verify time.
            try db.execute(sql: "ALTER TABLE challenges ADD COLUMN session_id TEXT")
        }
        migrator.registerMigration("v5: spent renewal tokens, for reuse detection") { db in
            // A renewal token rotates on every renewal; the spent ones are kept (by hash) for as long
            // as their session, so that presenting one again is recognised as reuse (OAuth 2.0
            // security BCP) and revokes the session.
            try db.execute(
                sql: """
                    CREATE TABLE spent_renewal_tokens (
                        token_hash TEXT PRIMARY KEY,
                        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                        spent_at REAL NOT NULL
                    );
                    CREATE INDEX spent_renewal_tokens_session ON spent_renewal_tokens(session_id);
                    """)
        }
        migrator.registerMigration("v6: indexes for pruning challenges, sessions and step-up grants") { db in
            try db.execute(
                sql: """
                    CREATE INDEX challenges_expiry ON challenges(expires_at);
                    CREATE INDEX sessions_expiry ON sessions(expires_at);
                    CREATE INDEX step_up_grants_expiry ON step_up_grants(expires_at);
                    """)
        }
        migrator.registerMigration("v7: alerts carry what they are about; one session_expiring a session") { db in
            // The spec's Event fields, each nullable (older events have none). `session_id` is the
            // sandbox's own: it makes `session_expiring` once per session (the partial unique index).
            // A device's token is unique per user already; `device_tokens_user` serves the listing.
            try db.execute(
                sql: """
                    ALTER TABLE events ADD COLUMN symbol TEXT;
                    ALTER TABLE events ADD COLUMN side TEXT;
                    ALTER TABLE events ADD COLUMN qty INTEGER;
                    ALTER TABLE events ADD COLUMN price_ticks INTEGER;
                    ALTER TABLE events ADD COLUMN reason TEXT;
                    ALTER TABLE events ADD COLUMN expires_at REAL;
                    ALTER TABLE events ADD COLUMN session_id TEXT;
                    CREATE UNIQUE INDEX events_session_expiring ON events(session_id) WHERE type = 'session_expiring';
                    CREATE INDEX device_tokens_user ON device_tokens(user_id, revoked_at);
                    """)
        }
        migrator.registerMigration("v8: the dead man's switch, and order_cancelled alerts") { db in
            // A session's switch (one row while armed) and the orders under it. The events table is
            // rebuilt for its CHECK to admit `order_cancelled`; its sequence carries on where it was.
            let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'events'") ?? 0
            try db.execute(
                sql: """
                    CREATE TABLE cancel_after (
                        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
                        user_id TEXT NOT NULL,
                        account_id TEXT NOT NULL,
                        timeout_s INTEGER NOT NULL CHECK (timeout_s BETWEEN 5 AND 600),
                        armed_at REAL NOT NULL,
                        fires_at REAL NOT NULL
                    );
                    CREATE INDEX cancel_after_fires ON cancel_after(fires_at);
                    CREATE INDEX cancel_after_account ON cancel_after(account_id);
                    ALTER TABLE orders ADD COLUMN switch_session_id TEXT;
                    CREATE INDEX orders_switch_session ON orders(switch_session_id) WHERE switch_session_id IS NOT NULL;
                    CREATE TABLE events_v8 (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        type TEXT NOT NULL CHECK (type IN ('fill_confirmed', 'order_rejected', 'order_cancelled', 'session_expiring',
                                                           'security_alert')),
                        title TEXT NOT NULL,
                        body TEXT,
                        order_id TEXT,
                        created_at REAL NOT NULL,
                        symbol TEXT,
                        side TEXT,
                        qty INTEGER,
                        price_ticks INTEGER,
                        reason TEXT,
                        expires_at REAL,
                        session_id TEXT
                    );
                    INSERT INTO events_v8 (seq, user_id, type, title, body, order_id, created_at, symbol, side, qty, price_ticks, reason,
                                           expires_at, session_id)
                        SELECT seq, user_id, type, title, body, order_id, created_at, symbol, side, qty, price_ticks, reason, expires_at, session_id
                        FROM events;
                    DROP TABLE events;
                    ALTER TABLE events_v8 RENAME TO events;
                    CREATE INDEX events_user_seq ON events(user_id, seq);
                    CREATE UNIQUE INDEX events_session_expiring ON events(session_id) WHERE type = 'session_expiring';
                    DELETE FROM sqlite_sequence WHERE name = 'events';
                    """)
            try db.execute(
                sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('events', MAX(?, (SELECT COALESCE(MAX(seq), 0) FROM events)))",
                arguments: [sequence])
        }
        migrator.registerMigration("v9: data-subject requests with deadlines, erasure progress and receipts; audit indexes") { db in
            // v1's dsr_requests was never written (the endpoints answered 501): it is replaced by
            // the shape the requests need. `erasure_identifiers` holds the subject's identifiers
            // between the erasure's first transaction and its last (so a crash can resume), and is
            // cleared when it completes. `dsr_keys` holds the receipt signing key and the
            // pseudonym key, made on first use.
            try db.execute(
                sql: """
                    DROP TABLE dsr_requests;
                    CREATE TABLE dsr_requests (
                        id TEXT PRIMARY KEY,
                        kind TEXT NOT NULL CHECK (kind IN ('access', 'erasure')),
                        subject TEXT NOT NULL COLLATE NOCASE,     -- the email; its keyed hash after an erasure
                        ticket TEXT NOT NULL,
                        status TEXT NOT NULL CHECK (status IN ('identity_unverified', 'verified', 'planned', 'erasing',
                                                               'completed', 'cancelled', 'refused')),
                        opened_by TEXT NOT NULL,
                        received_at REAL NOT NULL,
                        due_on TEXT NOT NULL,
                        extended INTEGER NOT NULL DEFAULT 0,
                        extension_reason TEXT,
                        verified_by TEXT,
                        verification_method TEXT,
                        verified_at REAL,
                        closed_reason TEXT,
                        plan_hash TEXT,
                        plan TEXT,
                        erasure_identifiers TEXT,
                        receipt TEXT,
                        receipt_signature TEXT,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        completed_at REAL
                    );
                    CREATE INDEX dsr_requests_subject ON dsr_requests(subject);
                    CREATE INDEX dsr_requests_status_due ON dsr_requests(status, due_on);
                    CREATE TABLE dsr_keys (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        receipt_key BLOB NOT NULL,           -- Ed25519 private key (raw 32 bytes)
                        pseudonym_key BLOB NOT NULL,         -- HMAC-SHA256 key for pseudonyms and subject hashes
                        created_at REAL NOT NULL
                    );
                    CREATE INDEX audit_events_subject ON audit_events(subject, seq);
                    CREATE INDEX audit_events_actor ON audit_events(actor, seq);
                    """)
        }
        migrator.registerMigration("v10: the push dispatcher's cursor") { db in
            // The newest event handed to APNs dispatch; one row, made when dispatch first starts.
            try db.execute(sql: "CREATE TABLE push_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL)")
        }
        migrator.registerMigration("v11: fills by account are found through (account_id, filled_at) alone") { db in
            // fills_account_time answers every lookup by account; a second index on account_id
            // only cost every fill written or erased another B-tree.
            try db.execute(sql: "DROP INDEX fills_account")
        }
        migrator.registerMigration("v12: only tombstones are indexed for pruning") { db in
            // Pruning looks for old deletes alone; upserts, nearly every row of the log, only
            // cost every change written or erased another B-tree entry. The index keeps its
            // columns so the pruning queries still read it alone (a partial index on `at` made
            // the planner scan the table for MAX(seq)).
            try db.execute(
                sql: """
                    DROP INDEX change_log_tombstones;
                    CREATE INDEX change_log_tombstones ON change_log(op, at) WHERE op = 'delete';
                    """)
        }
        migrator.registerMigration("v13: one-time registration codes, emailed") { db in
            // One live code per address, found by a hash of the address (the address itself is
            // not kept), the code itself only as a hash. Spent, expired and exhausted codes are
            // deleted (Pruning.emailCodes).
            try db.execute(
                sql: """
                    CREATE TABLE email_codes (
                        email_hash TEXT PRIMARY KEY,
                        code_hash TEXT NOT NULL,
                        tries_left INTEGER NOT NULL,
                        expires_at REAL NOT NULL,
                        created_at REAL NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v14: the tokens of erased accounts' sessions, to tell their devices") { db in
            // An erasure deletes the subject's sessions; their tokens' hashes are kept here until
            // the session would have ended, so that a device presenting one is told its account is
            // gone (account_closed) and drops what it keeps of it. A hash of a random token, tied
            // to no user: nothing personal is kept. Expired rows are deleted (Pruning.sessions).
            try db.execute(
                sql: """
                    CREATE TABLE closed_account_tokens (
                        token_hash TEXT PRIMARY KEY,
                        expires_at REAL NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v15: an alert's type is the spec's, without a CHECK a new type would rebuild the table for") { db in
            // Alerts are written with the spec's EventType only (NewEvent.type), so the column needs
            // no list of its own: a new alert type is a case of the spec's enum, nothing here. The
            // table is rebuilt once more for it; its sequence carries on where it was.
            let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'events'") ?? 0
            try db.execute(
                sql: """
                    CREATE TABLE events_v15 (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        type TEXT NOT NULL,
                        title TEXT NOT NULL,
                        body TEXT,
                        order_id TEXT,
                        created_at REAL NOT NULL,
                        symbol TEXT,
                        side TEXT,
                        qty INTEGER,
                        price_ticks INTEGER,
                        reason TEXT,
                        expires_at REAL,
                        session_id TEXT
                    );
                    INSERT INTO events_v15 (seq, user_id, type, title, body, order_id, created_at, symbol, side, qty, price_ticks, reason,
                                            expires_at, session_id)
                        SELECT seq, user_id, type, title, body, order_id, created_at, symbol, side, qty, price_ticks, reason, expires_at, session_id
                        FROM events;
                    DROP TABLE events;
                    ALTER TABLE events_v15 RENAME TO events;
                    CREATE INDEX events_user_seq ON events(user_id, seq);
                    CREATE UNIQUE INDEX events_session_expiring ON events(session_id) WHERE type = 'session_expiring';
                    DELETE FROM sqlite_sequence WHERE name = 'events';
                    """)
            try db.execute(
                sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('events', MAX(?, (SELECT COALESCE(MAX(seq), 0) FROM events)))",
                arguments: [sequence])
        }
        migrator.registerMigration("v16: registration codes budgeted per address, never replaced by another ask") { db in
            // An address has one live code; an ask mails it again rather than replacing it, so an
            // ask by someone else does not spoil the code a person is typing. It is kept as a keyed
            // hash and a sealed copy (to mail again) under a key held in memory (AuthStore.codeKey),
            // so the codes outstanding before this migration could not be checked anyway. The mails
            // and wrong guesses of an address are counted over their windows
            // (RegistrationCodeLimits), however many codes were asked for; rows older than the
            // longest window are deleted (Pruning.emailCodes).
            try db.execute(
                sql: """
                    DROP TABLE email_codes;
                    CREATE TABLE email_codes (
                        email_hash TEXT PRIMARY KEY,
                        code_hash TEXT NOT NULL,
                        code_sealed BLOB NOT NULL,
                        expires_at REAL NOT NULL,
                        created_at REAL NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE email_code_attempts (
                        email_hash TEXT NOT NULL,
                        kind TEXT NOT NULL CHECK (kind IN ('mailed', 'wrong')),
                        at REAL NOT NULL
                    );
                    CREATE INDEX email_code_attempts_address ON email_code_attempts(email_hash, kind, at);
                    """)
        }
        return migrator
    }

    /// Appends an audit event inside the caller's transaction.
    static func audit(_ db: Database, _ entry: AuditEntry) throws {
        let json = AuditDetailsJSON.text(entry.details)
        try db.cachedStatement(sql: "INSERT INTO audit_events (at, actor, action, subject, details) VALUES (?, ?, ?, ?, ?)").execute(
            arguments: [entry.at.timeIntervalSince1970, entry.actor, entry.action.rawValue, entry.subject, json])
    }

    /// Grants or revokes the staff flag of the account under `email` (audited with `actor`, the
    /// operator). Answers false when no account has the email.
    public func setStaff(email: String, staff: Bool, actor: String, now: Date = Date()) throws -> Bool {
        try writer.write { db -> Bool in
            guard let userID = try String.fetchOne(db, sql: "SELECT id FROM users WHERE email = ?", arguments: [email]) else { return false }
            try db.execute(sql: "UPDATE users SET staff = ? WHERE id = ?", arguments: [staff ? 1 : 0, userID])
            try Self.audit(db, AuditEntry(at: now, actor: actor, action: staff ? .staffGranted : .staffRevoked, subject: userID))
            return true
        }
    }

    /// The stores over this database, one per concern (Store/).
    var stores: Stores {
        let writer = StoreWriter(base: writer, waiting: waitingWrites)
        return Stores(
            health: HealthStore(writer: writer), auth: AuthStore(writer: writer, notifier: notifier, mailer: mailer, codeKey: codeKey),
            sessions: SessionStore(writer: writer, notifier: notifier, mailer: mailer), audit: AuditStore(writer: writer),
            trading: TradingStore(writer: writer, notifier: notifier),
            events: EventStore(writer: writer, notifier: notifier), devices: DeviceStore(writer: writer),
            dsr: DSRStore(writer: writer, mailer: mailer), trail: AuditTrailStore(writer: writer),
            pushDispatch: PushDispatchStore(writer: writer))
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = .sortedKeys
        return e
    }
}

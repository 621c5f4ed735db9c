import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain

/// Orders, fills, positions, cash and the change log. `write` and `read` are each one
/// transaction; the domain's rules and the handlers work inside it through `TradingLedger`.
///
/// One write or read transaction of the sandbox's SQLite database per call.
struct TradingStore: Sendable {
    let writer: StoreWriter
    let notifier: EventNotifier

    /// `dryRun`: the caller rolls the transaction back (by throwing), so the ledger skips what
    /// only a committed transaction keeps (`TradingLedger.dryRun`).
    func write<T: Sendable>(dryRun: Bool = false, _ body: @escaping @Sendable (TradingLedger) throws -> T) async throws -> T {
        let notifier = self.notifier
        return try await writer.write { db in try body(TradingLedger(db: db, notifier: notifier, dryRun: dryRun)) }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (TradingLedger) throws -> T) async throws -> T {
        let notifier = self.notifier
        return try await writer.read { db in try body(TradingLedger(db: db, notifier: notifier)) }
    }
}

/// The trading tables inside one transaction of `TradingStore` (one open GRDB transaction). Each
/// method is a statement or two; the rules live in the domain: matching and buying power in
/// `PaperEngine`, an order's acceptance (idempotency, paper only, deadline, step-up, buying power)
/// in `OrderAcceptance`, the dead man's switch in `DeadManSwitch`.
struct TradingLedger {
    let db: Database
    /// Told, once the transaction commits, of the users it wrote events for.
    let notifier: EventNotifier
    /// A dry run's ledger, in a transaction that is always rolled back: the audit entries, changes
    /// and events are not written, since nothing in the transaction reads them and none would
    /// stay (an order's dry run held the write lock about as long as the order did).
    let dryRun: Bool

    init(db: Database, notifier: EventNotifier, dryRun: Bool = false) {
        self.db = db
        self.notifier = notifier
        self.dryRun = dryRun
    }

    // MARK: Accounts and cash

    func cash(account: String) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT cash_ticks FROM accounts WHERE id = ?"), arguments: [account])
    }

    /// The account's trading mode; a stored value that is no mode is an error naming it, never
    /// read as paper.
    func mode(account: String) throws -> Components.Schemas.TradingMode? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT mode FROM accounts WHERE id = ?"), arguments: [account])
            .map { try .stored($0, table: "accounts", column: "mode") }
    }

    func addCash(account: String, _ delta: Int64) throws {
        try db.cachedStatement(sql: "UPDATE accounts SET cash_ticks = cash_ticks + ? WHERE id = ?").execute(arguments: [delta, account])
    }

    // MARK: Orders

    func openOrderIDs(account: String) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: SQL.openOrderIDs), arguments: [account])
    }

    func orderState(id: String) throws -> OrderState? {
        try Row.fetchOne(db.cachedStatement(sql: SQL.orderState), arguments: [id]).map { row in
            try OrderRecord(row: row).state(userID: row.decode(String.self, forColumn: "user_id"))
        }
    }

    func openBuys(account: String, excluding: String?) throws -> [OpenBuy] {
        try Row.fetchAll(db.cachedStatement(sql: SQL.openBuys), arguments: [account, excluding ?? ""]).map { row in
            try OpenBuy(
                symbol: row.decode(String.self, forColumn: "symbol"), openQty: row.decode(Int64.self, forColumn: "open_qty"),
                limit: row.decode(Int64?.self, forColumn: "limit_price_ticks"))
        }
    }

    /// The quantity the account's open sell orders of `symbol` (other than `excluding`) still have to fill.
    func openSellQty(account: String, symbol: String, excluding: String?) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: SQL.openSellQty), arguments: [account, symbol, excluding ?? ""]) ?? 0
    }

    /// The ID and request hash of the account's order under `clientOrderID`.
    func order(account: String, clientOrderID: String) throws -> (id: String, requestHash: String?)? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, request_hash FROM orders WHERE account_id = ? AND client_order_id = ?"),
            arguments: [account, clientOrderID]
        ).map { row in
            try (row.decode(String.self, forColumn: "id"), row.decode(String?.self, forColumn: "request_hash"))
        }
    }

    func insertOrder(_ o: NewOrder) throws {
        try db.cachedStatement(sql: SQL.insertOrder).execute(arguments: [
            o.id, o.account, o.clientOrderID, o.symbol, o.side, o.qty, o.type, o.limit,
            o.tif, o.notAfter.timeIntervalSince1970, o.requestHash, o.now.timeIntervalSince1970, o.now.timeIntervalSince1970,
            o.switchSession,
        ])
    }

    func setStatus(orderID: String, _ status: OrderStatus, rejectCode: String?, now: Date) throws {
        try db.cachedStatement(sql: "UPDATE orders SET status = ?, reject_code = COALESCE(?, reject_code), updated_at = ? WHERE id = ?").execute(
            arguments: [status, rejectCode, now.timeIntervalSince1970, orderID])
    }

    func setFilled(orderID: String, filled: Int64, averagePrice: Int64, status: OrderStatus, now: Date) throws {
        try db.cachedStatement(sql: "UPDATE orders SET filled_qty = ?, avg_fill_price_ticks = ?, status = ?, updated_at = ? WHERE id = ?").execute(
            arguments: [filled, averagePrice, status, now.timeIntervalSince1970, orderID])
    }

    /// An order as the API shows it.
    func order(id: String) throws -> Components.Schemas.Order? {
        try OrderRecord.filter(OrderRecord.Columns.id == id).fetchOne(db)?.api
    }

    /// The order if `account` owns it.
    func ownedOrderID(_ id: String, account: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT id FROM orders WHERE id = ? AND account_id = ?"), arguments: [id, account])
    }

    func orders(_ query: OrderQuery) throws -> Components.Schemas.OrderList {
        var clauses = ["account_id = ?"]
        var arguments: StatementArguments = [query.account]
        if let status = query.status { clauses.append("status = ?"); arguments += [status] }
        if let id = query.clientOrderID { clauses.append("client_order_id = ?"); arguments += [id] }
        if let before = query.before { clauses.append("rowid < ?"); arguments += [before] }
        let limit = query.limit
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT \(OrderRecord.columns), rowid AS page_key FROM orders WHERE \(clauses.joined(separator: " AND "))
                ORDER BY rowid DESC LIMIT \(limit + 1)
                """, arguments: arguments)
        let page = rows.prefix(limit)
        return .init(
            orders: try page.map { try OrderRecord(row: $0).api }, nextBefore: rows.count > limit ? page.last.map { "\($0["page_key"] as Int64)" } : nil)
    }

    // MARK: Fills and positions

    func insertFill(_ f: NewFill) throws {
        try db.cachedStatement(sql: "INSERT INTO fills (id, account_id, order_id, symbol, side, qty, price_ticks, filled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            .execute(
                arguments: [f.id, f.account, f.orderID, f.symbol, f.side, f.qty, f.price, f.at.timeIntervalSince1970])
    }

    func holding(account: String, symbol: String) throws -> Holding? {
        try PositionRecord.fetchOne(db.cachedStatement(sql: SQL.holding), arguments: [account, symbol])?.holding
    }

    func insertPosition(id: String, account: String, symbol: String, qty: Int64, averagePrice: Int64, now: Date) throws {
        try db.cachedStatement(sql: "INSERT INTO positions (id, account_id, symbol, qty, avg_price_ticks, updated_at) VALUES (?, ?, ?, ?, ?, ?)").execute(
            arguments: [id, account, symbol, qty, averagePrice, now.timeIntervalSince1970])
    }

    func updatePosition(id: String, qty: Int64, averagePrice: Int64, now: Date) throws {
        try db.cachedStatement(sql: "UPDATE positions SET qty = ?, avg_price_ticks = ?, updated_at = ? WHERE id = ?").execute(
            arguments: [qty, averagePrice, now.timeIntervalSince1970, id])
    }

    func deletePosition(id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM positions WHERE id = ?").execute(arguments: [id])
    }

    // MARK: The dead man's switch

    /// `session`'s switch, if armed (whether or not its deadline passed).
    func armedSwitch(session: String) throws -> ArmedSwitch? {
        try Row.fetchOne(db.cachedStatement(sql: SQL.armedSwitch), arguments: [session]).map(Self.armedSwitch)
    }

    /// Arms or renews a switch (one row per session).
    func saveSwitch(_ a: ArmedSwitch) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO cancel_after (session_id, user_id, account_id, timeout_s, armed_at, fires_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (session_id) DO UPDATE SET timeout_s = excluded.timeout_s, armed_at = excluded.armed_at, fires_at = excluded.fires_at
                """
        ).execute(arguments: [a.sessionID, a.userID, a.accountID, a.timeout, a.armedAt.timeIntervalSince1970, a.firesAt.timeIntervalSince1970])
    }

    /// Ends `session`'s switch; with `release`, the orders under it are no longer covered.
    func removeSwitch(session: String, release: Bool) throws {
        try db.cachedStatement(sql: "DELETE FROM cancel_after WHERE session_id = ?").execute(arguments: [session])
        if release {
            try db.cachedStatement(sql: "UPDATE orders SET switch_session_id = NULL WHERE switch_session_id = ?").execute(arguments: [session])
        }
    }

    /// Puts the account's open orders among `ids` under `session`'s switch. Answers the IDs not the
    /// account's (`foreign`) and those under another session's armed switch (`heldElsewhere`),
    /// which it leaves where they are.
    func cover(orderIDs ids: [String], session: String, account: String) throws -> (foreign: [String], heldElsewhere: [String]) {
        var foreign: [String] = [], heldElsewhere: [String] = []
        for id in ids {
            guard try ownedOrderID(id, account: account) != nil else { foreign.append(id); continue }
            let holder = try String.fetchOne(
                db,
                sql: """
                    SELECT orders.switch_session_id FROM orders JOIN cancel_after ON cancel_after.session_id = orders.switch_session_id
                    WHERE orders.id = ? AND orders.switch_session_id != ?
                    """, arguments: [id, session])
            guard holder == nil else { heldElsewhere.append(id); continue }
            try db.execute(
                sql: """
                    UPDATE orders SET switch_session_id = ? WHERE id = ? AND status IN (\(OrderStatus.workingSQLList))
                    """, arguments: [session, id])
        }
        return (foreign, heldElsewhere)
    }

    /// The open (pending, open, partially filled) orders under `session`'s switch, oldest first.
    func coveredOpenOrderIDs(session: String) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                SELECT id FROM orders WHERE switch_session_id = ? AND status IN (\(OrderStatus.workingSQLList)) ORDER BY rowid
                """, arguments: [session])
    }

    /// Switches due at `now` (deadline passed, or session revoked or over), of `account` only when given.
    func dueSwitches(now: Date, account: String?) throws -> [DueSwitch] {
        let t = now.timeIntervalSince1970
        let statement = try account == nil ? db.cachedStatement(sql: SQL.dueSwitches) : db.cachedStatement(sql: SQL.dueSwitchesOfAccount)
        return try Row.fetchAll(statement, arguments: account.map { [t, t, $0] } ?? [t, t]).map { row in
            let armed = try Self.armedSwitch(row)
            let revoked = try row.decode(Double?.self, forColumn: "revoked_at")
            let ended = min(revoked ?? .infinity, try row.decode(Double.self, forColumn: "expires_at"))
            return DueSwitch(armed: armed, sessionEnded: ended <= t && ended < armed.firesAt.timeIntervalSince1970)
        }
    }

    /// A switch from a row with the columns `SQL.switchColumns` names.
    static func armedSwitch(_ row: Row) throws -> ArmedSwitch {
        try ArmedSwitch(
            sessionID: row.decode(String.self, forColumn: "session_id"), userID: row.decode(String.self, forColumn: "user_id"),
            accountID: row.decode(String.self, forColumn: "account_id"), timeout: row.decode(Int.self, forColumn: "timeout_s"),
            armedAt: Date(timeIntervalSince1970: row.decode(Double.self, forColumn: "armed_at")),
            firesAt: Date(timeIntervalSince1970: row.decode(Double.self, forColumn: "fires_at")))
    }

    // MARK: Step-up grants

    /// Spends a grant (by hash): single use, this user and this action only, before it expires.
    func consumeStepUpGrant(grantHash: String, actionHash: String, userID: String, now: Date) throws -> Bool {
        try StepUpGrants.consume(db, grantHash: grantHash, actionHash: actionHash, userID: userID, now: now)
    }

    // MARK: Change log

    func recordChange(account: String, _ entity: ChangeEntity, _ id: String, deleted: Bool, at: Date) throws {
        guard !dryRun else { return }
        try ChangeLog.record(db, account: account, entity, id, deleted: deleted, at: at)
    }

    func pruneTombstones(before cutoff: Date) throws {
        try ChangeLog.pruneTombstones(db, before: cutoff)
    }

    func syncHorizon() throws -> Int64 {
        try ChangeLog.horizon(db)
    }

    /// The page of the account's changes after `seq`, as the spec's `SyncPage` JSON.
    func changePage(account: String, after from: Int64, limit: Int, reset: Bool, asOf: Date) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(limit * 260 + 128)
        // A sync from the start is told how many changes it will get (one count over the log's
        // index), so that a progress line has its total without asking for the summary.
        let total =
            from == 0
            ? try Int64.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM change_log WHERE account_id = ?"), arguments: [account]) : nil
        try SyncPageJSON.write(db, account: account, after: from, limit: limit, reset: reset, asOf: asOf, total: total, to: &out)
        return out
    }

    func summary(account: String, since: Double) throws -> SummaryState {
        let closed = OrderStatus.finalSQLList
        let cursor = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(seq) FROM change_log WHERE account_id = ?"), arguments: [account]) ?? 0
        func summarize(_ sql: String, _ arguments: StatementArguments, line: (Row) -> String) throws -> Components.Schemas.EntitySummary {
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            let total = try SyncChecksum.Accumulator.over { try rows.next().map(line) }
            return .init(count: total.count, checksum: total.checksum)
        }
        let positions = try summarize("SELECT id, symbol, qty, avg_price_ticks FROM positions WHERE account_id = ? ORDER BY id", [account]) {
            SyncChecksum.positionLine(id: $0["id"], symbol: $0["symbol"], qty: $0["qty"], avgPrice: Money.string(ticks: $0["avg_price_ticks"]))
        }
        let fills = try summarize(
            "SELECT id, order_id, symbol, side, qty, price_ticks FROM fills WHERE account_id = ? AND filled_at >= ? ORDER BY id",
            [account, since]
        ) {
            SyncChecksum.fillLine(
                id: $0["id"], orderID: $0["order_id"], symbol: $0["symbol"], side: $0["side"], qty: $0["qty"],
                price: Money.string(ticks: $0["price_ticks"]))
        }
        let orders = try summarize(
            """
            SELECT id, client_order_id, symbol, side, qty, type, limit_price_ticks, status, filled_qty, avg_fill_price_ticks
            FROM orders WHERE account_id = ? AND (status NOT IN (\(closed)) OR updated_at >= ?) ORDER BY id
            """, [account, since]
        ) { row in
            let limit: Int64? = row["limit_price_ticks"], average: Int64? = row["avg_fill_price_ticks"]
            return SyncChecksum.orderLine(
                id: row["id"], clientOrderID: row["client_order_id"], symbol: row["symbol"], side: row["side"],
                qty: row["qty"], type: row["type"], limitPrice: limit.map(Money.string(ticks:)),
                status: row["status"], filledQty: row["filled_qty"], avgFillPrice: average.map(Money.string(ticks:)))
        }
        return SummaryState(cursor: cursor, positions: positions, fills: fills, orders: orders)
    }

    func portfolio(account: String) throws -> PortfolioState {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT cash_ticks, mode FROM accounts WHERE id = ?"), arguments: [account])
        let holdings = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT symbol, qty, avg_price_ticks FROM positions WHERE account_id = ?"), arguments: [account]
        )
        .map { (symbol: $0["symbol"] as String, qty: $0["qty"] as Int64, averagePrice: $0["avg_price_ticks"] as Int64) }
        return PortfolioState(
            cash: row?["cash_ticks"] ?? 0, mode: try (row?["mode"] as String?).map { try .stored($0, table: "accounts", column: "mode") } ?? .paper,
            holdings: holdings)
    }

    // MARK: Events and audit

    func event(_ e: NewEvent) throws {
        guard !dryRun else { return }
        try EventLog.insert(db, e, notifier: notifier)
    }

    func audit(_ entry: AuditEntry) throws {
        guard !dryRun else { return }
        try SandboxDatabase.audit(db, entry)
    }

    // MARK: Rows as API models

    static func position(_ row: Row) throws -> Components.Schemas.Position { try PositionRecord(row: row).api }
    static func fill(_ row: Row) throws -> Components.Schemas.Fill { try FillRecord(row: row).api }
    static func order(_ row: Row) throws -> Components.Schemas.Order { try OrderRecord(row: row).api }
}

extension TradingLedger {
    /// The statements an order runs whose text names a rule (a record's columns, a vocabulary's
    /// values), each spelt once rather than at each call; `cachedStatement` finds each by its text.
    enum SQL {
        static let openOrderIDs = "SELECT id FROM orders WHERE account_id = ? AND status IN (\(OrderStatus.restingSQLList)) ORDER BY rowid"
        static let orderState = """
            SELECT \(OrderRecord.columns(of: "o")), a.user_id AS user_id FROM orders o JOIN accounts a ON a.id = o.account_id WHERE o.id = ?
            """
        static let openBuys = """
            SELECT symbol, qty - filled_qty AS open_qty, limit_price_ticks FROM orders
            WHERE account_id = ? AND side = '\(OrderSide.buy.rawValue)' AND status IN (\(OrderStatus.restingSQLList)) AND id != ?
            """
        static let openSellQty = """
            SELECT COALESCE(SUM(qty - filled_qty), 0) FROM orders
            WHERE account_id = ? AND symbol = ? AND side = '\(OrderSide.sell.rawValue)' AND status IN (\(OrderStatus.restingSQLList)) AND id != ?
            """
        static let insertOrder = """
            INSERT INTO orders (id, account_id, client_order_id, symbol, side, qty, type, limit_price_ticks, tif, status, filled_qty, mode,
            not_after, request_hash, created_at, updated_at, switch_session_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, \(Components.Schemas.OrderStatus.open.sql),
            0, \(Components.Schemas.TradingMode.paper.sql), ?, ?, ?, ?, ?)
            """
        static let holding = "SELECT \(PositionRecord.columns) FROM positions WHERE account_id = ? AND symbol = ?"
        /// A switch's columns, as `armedSwitch(_:)` reads them (by name).
        static let switchColumns = ["session_id", "user_id", "account_id", "timeout_s", "armed_at", "fires_at"]
        static let armedSwitch = "SELECT \(switchColumns.joined(separator: ", ")) FROM cancel_after WHERE session_id = ?"
        /// Switches due at a time (given twice), each with its session's revoked_at and expires_at.
        private static let due = """
            SELECT \(switchColumns.map { "c.\($0) AS \($0)" }.joined(separator: ", ")), s.revoked_at AS revoked_at, s.expires_at AS expires_at
            FROM cancel_after c JOIN sessions s ON s.id = c.session_id
            WHERE (c.fires_at <= ? OR s.revoked_at IS NOT NULL OR s.expires_at <= ?)
            """
        static let dueSwitches = due + " ORDER BY c.fires_at"
        /// Of one account (given third).
        static let dueSwitchesOfAccount = due + " AND c.account_id = ? ORDER BY c.fires_at"
    }
}

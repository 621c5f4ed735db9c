import Foundation
import GRDB
import GRDBSQLite
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire

/// Applying sync pages: each page and its cursor in one transaction, so the cursor never runs
/// ahead of the data; rebuilds out of readers' sight (a first fill in the live tables, which
/// readers do not read until it ends; a filled cache's rebuild staged in logs and applied at the end).
extension CacheStore {
    /// Starts a full rebuild for `accountID`. A cache of another account is wiped first. A cache
    /// never filled is filled in place: its pages go to the live tables, whose indexes other than
    /// the key are set aside until it ends, and readers see "no data yet" until then. A filled
    /// cache (even one whose tables are empty) keeps its old copy for its readers: the pages are
    /// staged in the rebuild's logs (`rebuild_*`) and applied to the live tables when it ends.
    public func beginRebuild(accountID: String) throws {
        try write { db in
            let state = try Self.syncState(db)
            var neverFilled = state.lastSuccessAt == nil
            if state.accountID != nil && state.accountID != accountID {
                try Self.wipe(db)
                neverFilled = true
            } else if state.rebuilding == .live {
                // A first fill that is not carried on: what it wrote is no copy readers ever saw.
                for table in Self.entityTables { try db.execute(sql: "DELETE FROM \(table)") }
            }
            // Indexes an earlier fill left set aside (one ended by an older version, say) come back.
            try Self.restoreIndexes(db)
            let empty = try Self.entityTables.allSatisfy {
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (SELECT 1 FROM \($0) LIMIT 1)") == 0
            }
            for table in Self.entityTables { try db.execute(sql: "DELETE FROM rebuild_\(table)") }
            // Only a cache no reader can read is filled in place: a reader that found a last success
            // never sees part of a fill.
            if empty && neverFilled {
                try Self.setIndexesAside(db)
                try db.execute(
                    sql: "UPDATE sync_state SET rebuilding = 1, rebuild_cursor = 0, account_id = ?, last_success_at = NULL WHERE id = 1",
                    arguments: [accountID])
            } else {
                try db.execute(sql: "UPDATE sync_state SET rebuilding = 2, rebuild_cursor = 0 WHERE id = 1")
            }
        }
    }

    /// The synced entities' tables (the live tables but the portfolio), each with its rebuild log.
    static let entityTables = ["positions", "fills", "orders"]

    /// Drops the entity tables' indexes (all but their keys), keeping their definitions to build
    /// them again (`restoreIndexes`). Filling a table page by page, each commit rewrote the pages of
    /// its indexes that the page's rows fell in, most of them; one sorted pass at the end costs a
    /// fraction of that.
    static func setIndexesAside(_ db: Database) throws {
        let indexes = try Row.fetchAll(
            db,
            sql: """
                SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
                AND tbl_name IN (\(entityTables.map { "'\($0)'" }.joined(separator: ", ")))
                """)
        for index in indexes {
            let name: String = index["name"]
            try db.execute(sql: "INSERT OR REPLACE INTO rebuild_set_aside_indexes (name, sql) VALUES (?, ?)", arguments: [name, index["sql"] as String])
            try db.execute(sql: "DROP INDEX \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"")
        }
    }

    /// Builds the indexes `setIndexesAside` dropped, each in one sorted pass.
    static func restoreIndexes(_ db: Database) throws {
        let indexes = try Row.fetchAll(
            db,
            sql: """
                SELECT a.sql FROM rebuild_set_aside_indexes a
                WHERE NOT EXISTS (SELECT 1 FROM sqlite_master m WHERE m.type = 'index' AND m.name = a.name) ORDER BY a.name
                """)
        guard !indexes.isEmpty else { return }
        // Each index sorts its table: with a worker thread SQLite sorts on two cores, not one.
        // A larger page cache for the sort was slower and cost 20 MiB.
        try db.execute(sql: "PRAGMA threads = \(Self.sortThreads)")
        defer { try? db.execute(sql: "PRAGMA threads = 0") }
        for index in indexes {
            // One statement, and only an index's: what sqlite_master said when it was set aside.
            let sql: String = index[0]
            guard sql.uppercased().hasPrefix("CREATE INDEX ") || sql.uppercased().hasPrefix("CREATE UNIQUE INDEX ") else {
                throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "rebuild_set_aside_indexes holds something other than an index: \(sql.prefix(80))")
            }
            try db.makeStatement(sql: sql).execute()
        }
        try db.execute(sql: "DELETE FROM rebuild_set_aside_indexes")
    }

    /// Applies one page: to the live tables and `cursor`; while rebuilding, to the live tables (the
    /// first fill of a cache never filled) or the rebuild's logs, and `rebuild_cursor`.
    public func apply(_ page: Components.Schemas.SyncPage) throws {
        try write { db in
            let state = try Self.syncState(db)
            let sql = state.rebuilding == .shadow ? Self.oneRowSQL.staged : Self.oneRowSQL.live
            let upsertPosition = try db.cachedStatement(sql: sql.upsert["positions"]!)
            let upsertFill = try db.cachedStatement(sql: sql.upsert["fills"]!)
            let upsertOrder = try db.cachedStatement(sql: sql.upsert["orders"]!)
            for change in page.changes {
                let table =
                    switch change.entity {
                    case .position: "positions";
                    case .fill: "fills";
                    case .order: "orders"
                    }
                if change.op == .delete {
                    try db.cachedStatement(sql: sql.delete[table]!).execute(arguments: [change.id])
                    continue
                }
                if let p = change.position {
                    try upsertPosition.execute(arguments: [p.id, p.symbol, p.qty, p.avgPrice, p.updatedAt.timeIntervalSince1970])
                } else if let f = change.fill {
                    try upsertFill.execute(arguments: [f.id, f.orderId, f.symbol, f.side.rawValue, f.qty, f.price, f.filledAt.timeIntervalSince1970])
                } else if let o = change.order {
                    try upsertOrder.execute(arguments: [
                        o.id, o.clientOrderId, o.symbol, o.side.rawValue, o.qty, o._type.rawValue, o.limitPrice, o.tif.rawValue,
                        o.status.rawValue, o.filledQty, o.avgFillPrice, o.rejectCode, o.mode.rawValue,
                        o.notAfter?.timeIntervalSince1970, o.createdAt.timeIntervalSince1970, o.updatedAt.timeIntervalSince1970,
                    ])
                }
            }
            let column = state.rebuilding == .none ? "cursor" : "rebuild_cursor"
            try db.execute(sql: "UPDATE sync_state SET \(column) = ? WHERE id = 1", arguments: [page.cursor])
        }
    }

    /// Applies one page as the server sent it (its JSON bytes), read straight into the tables:
    /// the same rows as `apply(_:)` of the decoded page, at a fraction of the cost. A page the fast
    /// reader does not take throws `SyncPageReader.Unsupported` with nothing applied: decode it
    /// (`SyncPageReader.decode`) and apply that. Answers the number of changes applied.
    @discardableResult
    public func apply(json: UnsafeRawBufferPointer) throws -> Int {
        try apply(json: json, outline: try SyncPageReader.outline(of: json))
    }

    /// As `apply(json:)`, with the page's outline already read (`SyncPageReader.outline(of:)`).
    @discardableResult
    public func apply(json: UnsafeRawBufferPointer, outline: SyncPageReader.Outline) throws -> Int {
        // An outline of other bytes (a caller's mistake) is read again from these.
        let outline = (outline.changesEnd ?? outline.changesStart) < json.count ? outline : try SyncPageReader.outline(of: json)
        // The rows' text is bound from the page's bytes.
        let page = json.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) } ?? UnsafePointer(RowWriter.noBytes)
        let header = outline.header
        return try writeJournallingInMemory { db in
            let state = try Self.syncState(db)
            let statements = try RowWriter(db, staged: state.rebuilding == .shadow)
            defer { statements.clear() }
            var sinceGivingWay = 0
            let count = try SyncPageReader.changes(in: json, of: outline) { change in
                try statements.apply(change, page)
                sinceGivingWay += 1
                if sinceGivingWay == Self.changesBetweenGivingWay {
                    sinceGivingWay = 0
                    GiveWay.toReadyThreads()
                }
            }
            try statements.flush(page)
            let column = state.rebuilding == .none ? "cursor" : "rebuild_cursor"
            try db.execute(sql: "UPDATE sync_state SET \(column) = ? WHERE id = 1", arguments: [header.cursor])
            return count
        }
    }

    /// A page's changes written between two calls of `GiveWay.toReadyThreads` (about 0.15 ms of
    /// writing). A full refresh writes one page while the next is at the server, and the threads
    /// that bring that page in (the transfer's, the fetcher's) are short jobs on the refresh's
    /// critical path: on 2 cores, with the page writer holding one core for 7 ms at a time and the
    /// server the other, each of them waited for a time slice to run out. 1,512,964 changes in 303
    /// pages, 4 alternating pairs: the pages came in 3.69-3.90 s against 4.10-4.40 s, the whole
    /// refresh 4.73-5.37 s against 5.28-5.78 s (curl alone pulls the same pages in 3.15-3.35 s).
    static let changesBetweenGivingWay = 100

    /// `writeSQL` with one row to a statement, for the live tables and for a rebuild's logs: made
    /// once, not for every page.
    static let oneRowSQL = (live: writeSQL(staged: false), staged: writeSQL(staged: true))

    /// The statements that write a change: to the live tables (an upsert replaces, a tombstone
    /// deletes), or appended to a rebuild's logs (a tombstone as its id alone). An upsert's
    /// statement writes `rows` rows, in order (a later one of an id replacing an earlier one, as
    /// if they were written one by one).
    static func writeSQL(staged: Bool, rows: Int = 1) -> (upsert: [String: String], delete: [String: String]) {
        var upsert: [String: String] = [:], delete: [String: String] = [:]
        for (table, columns) in entityColumnNames {
            let row = "(" + Array(repeating: "?", count: columns.split(separator: ",").count).joined(separator: ", ") + ")"
            let values = Array(repeating: row, count: rows).joined(separator: ", ")
            upsert[table] =
                staged
                ? "INSERT INTO rebuild_\(table) (\(columns)) VALUES \(values)"
                : "INSERT OR REPLACE INTO \(table) (\(columns)) VALUES \(values)"
            delete[table] = staged ? "INSERT INTO rebuild_\(table) (id) VALUES (?)" : "DELETE FROM \(table) WHERE id = ?"
        }
        return (upsert, delete)
    }

    /// Ends a rebuild, in one transaction. A first fill has the indexes it set aside built. A rebuild of a filled
    /// cache has its logs applied to the live tables, emptied first: readers see the old copy or the
    /// new one. Each id's last change wins, as if the pages had been applied one by one: the rows go
    /// in in the log's order, and the tables' other indexes are built afterwards, each in one sorted
    /// pass.
    public func finishRebuild(accountID: String) throws {
        try write { db in
            let state = try Self.syncState(db)
            if state.rebuilding == .shadow {
                try Self.setIndexesAside(db)
                for table in Self.entityTables {
                    try db.execute(sql: "DELETE FROM \(table)")
                    try Self.applyLog(db, table)
                }
            }
            try Self.restoreIndexes(db)
            try db.execute(
                sql: "UPDATE sync_state SET cursor = rebuild_cursor, rebuild_cursor = 0, rebuilding = 0, account_id = ? WHERE id = 1",
                arguments: [accountID])
        }
    }

    /// Applies the rebuild's log of `table` to the live table, and empties it: each id's last
    /// change wins, as if the changes had been applied one by one.
    static func applyLog(_ db: Database, _ table: String) throws {
        let staged = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM (SELECT 1 FROM rebuild_\(table) LIMIT 1)") ?? 0
        guard staged > 0 else { return }
        let columns = Self.entityColumnNames[table]!
        // Upserts in the log's order (its rowid order, which needs no sort), each id's later
        // ones replacing its earlier ones. Sorting a million staged rows by id first, so that
        // the key went in in order, cost twice what the key's random inserts cost.
        try db.execute(sql: "INSERT OR REPLACE INTO \(table) (\(columns)) SELECT \(columns) FROM rebuild_\(table) WHERE symbol IS NOT NULL ORDER BY rowid")
        // Then the ids whose last change is a tombstone go.
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM rebuild_\(table) WHERE symbol IS NULL)") == true {
            try db.execute(
                sql: """
                    DELETE FROM \(table) WHERE id IN (SELECT id FROM rebuild_\(table) GROUP BY id
                    HAVING MAX(rowid) = MAX(CASE WHEN symbol IS NULL THEN rowid END))
                    """)
        }
        try db.execute(sql: "DELETE FROM rebuild_\(table)")
    }

    /// SQLite's sort workers during `finishRebuild`: one per core beyond the first, at most three.
    static let sortThreads = min(3, max(0, ProcessInfo.processInfo.activeProcessorCount - 1))

    public func savePortfolio(_ p: Components.Schemas.Portfolio) throws {
        try write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO portfolio (id, account_id, as_of, mode, cash, market_value, equity, buying_power, unrealized_pnl, positions_count)
                    VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    p.accountId, p.asOf.timeIntervalSince1970, p.mode.rawValue, p.cash, p.marketValue, p.equity,
                    p.buyingPower, p.unrealizedPnl, p.positionsCount,
                ])
            try db.execute(sql: "DELETE FROM marks")
            // A mark for every position, every refresh (10,000 of them, say): bound straight to
            // SQLite, as the journal's writes are (StatementArguments cost more than the inserts).
            let mark = try db.cachedStatement(sql: "INSERT OR REPLACE INTO marks (symbol, price) VALUES (?, ?)")
            for m in p.marks ?? [] {
                var run = BoundRun(mark)
                run.text(m.symbol)
                run.text(m.price)
                try run.run(db)
            }
        }
    }

    public func recordAttempt(at: Date) throws {
        try write { db in
            try db.execute(sql: "UPDATE sync_state SET last_attempt_at = ? WHERE id = 1", arguments: [at.timeIntervalSince1970])
        }
    }

    /// A refresh succeeded: the error of an earlier one is over, and `status` no longer shows it.
    public func recordSuccess(at: Date) throws {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE sync_state SET last_success_at = ?, connectivity = 'online', connectivity_at = ?,
                        last_error_kind = NULL, last_error_at = NULL, last_error_message = NULL WHERE id = 1
                    """, arguments: [at.timeIntervalSince1970, at.timeIntervalSince1970])
        }
    }

    /// Records that the server answered (a command other than refresh reached it): the cache is no
    /// longer said to have no connection; how old its data is stays as it was.
    public func recordOnline(at: Date) throws {
        try write { db in
            try db.execute(
                sql: "UPDATE sync_state SET connectivity = 'online', connectivity_at = ? WHERE id = 1",
                arguments: [at.timeIntervalSince1970])
        }
    }

    /// Records a failed refresh (kind, time, message) for `status` and the staleness disclosure;
    /// the data is not touched.
    public func recordFailure(kind: String, message: String, connectivity: Connectivity?, at: Date) throws {
        try write { db in
            try db.execute(
                sql: """
                    UPDATE sync_state SET last_error_kind = ?, last_error_at = ?, last_error_message = ?,
                    connectivity = COALESCE(?, connectivity), connectivity_at = CASE WHEN ? IS NULL THEN connectivity_at ELSE ? END WHERE id = 1
                    """, arguments: [kind, at.timeIntervalSince1970, message, connectivity?.rawValue, connectivity?.rawValue, at.timeIntervalSince1970])
        }
    }

    // MARK: Retention

    /// Evicts fills, and closed orders, older than `cutoff`; answers how many rows went.
    @discardableResult
    public func evict(before cutoff: Date) throws -> Int {
        try write { db in
            let closed = OrderStatus.finalSQLList
            try db.execute(sql: "DELETE FROM fills WHERE filled_at < ?", arguments: [cutoff.timeIntervalSince1970])
            var removed = db.changesCount
            try db.execute(sql: "DELETE FROM orders WHERE status IN (\(closed)) AND updated_at < ?", arguments: [cutoff.timeIntervalSince1970])
            removed += db.changesCount
            try db.execute(
                sql: "UPDATE sync_state SET evicted_before = MAX(COALESCE(evicted_before, 0), ?) WHERE id = 1",
                arguments: [cutoff.timeIntervalSince1970])
            return removed
        }
    }

    /// Empties the cache: the next refresh is a full one.
    public func purgeAll() throws {
        try write { db in try Self.wipe(db) }
        try? writer.vacuum()
    }

    static func wipe(_ db: Database) throws {
        for table in liveTables + ["marks"] + entityTables.map({ "rebuild_" + $0 }) {
            try db.execute(sql: "DELETE FROM \(table)")
        }
        try restoreIndexes(db)  // of empty tables: at once
        try db.execute(
            sql: """
                UPDATE sync_state SET account_id = NULL, cursor = 0, rebuilding = 0, rebuild_cursor = 0, last_success_at = NULL,
                evicted_before = NULL WHERE id = 1
                """)
    }

    // MARK: Verification

    public struct EntitySummary: Sendable, Equatable {
        public var count: Int64
        public var checksum: String
        public init(count: Int64, checksum: String) {
            self.count = count
            self.checksum = checksum
        }
    }

    /// Counts and checksums of the live tables, computed as the server computes its summary.
    public func summary(since: Date?) throws -> [String: EntitySummary] {
        let floor = since?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude
        let closed = OrderStatus.finalSQLList
        return try read { db in
            func summarize(_ sql: String, _ arguments: StatementArguments, line: (Row) -> String) throws -> EntitySummary {
                let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
                let total = try SyncChecksum.Accumulator.over { try rows.next().map(line) }
                return EntitySummary(count: total.count, checksum: total.checksum)
            }
            return [
                "positions": try summarize("SELECT id, symbol, qty, avg_price FROM positions ORDER BY id", []) {
                    SyncChecksum.positionLine(id: $0["id"], symbol: $0["symbol"], qty: $0["qty"], avgPrice: $0["avg_price"])
                },
                "fills": try summarize("SELECT id, order_id, symbol, side, qty, price FROM fills WHERE filled_at >= ? ORDER BY id", [floor]) {
                    SyncChecksum.fillLine(id: $0["id"], orderID: $0["order_id"], symbol: $0["symbol"], side: $0["side"], qty: $0["qty"], price: $0["price"])
                },
                "orders": try summarize(
                    """
                    SELECT id, client_order_id, symbol, side, qty, type, limit_price, status, filled_qty, avg_fill_price FROM orders
                    WHERE status NOT IN (\(closed)) OR updated_at >= ? ORDER BY id
                    """, [floor]
                ) {
                    SyncChecksum.orderLine(
                        id: $0["id"], clientOrderID: $0["client_order_id"], symbol: $0["symbol"], side: $0["side"],
                        qty: $0["qty"], type: $0["type"], limitPrice: $0["limit_price"], status: $0["status"],
                        filledQty: $0["filled_qty"], avgFillPrice: $0["avg_fill_price"])
                },
            ]
        }
    }
}

/// The page's rows bound straight into SQLite's prepared statements (text bound from the page's
/// bytes, which outlive each step), inside the store's write transaction. Fills and orders, most
/// of a page, are written `batch` rows to a statement: a statement's own work (its cursors opened
/// and closed, its start and end, its journal) was a good part of a row's. A tombstone, and the
/// page's end, write the rows held back before it.
private final class RowWriter {
    let db: Database
    let position: Statement, fill: Statement, order: Statement
    let fills: Statement, orders: Statement
    let deletes: [SyncPageReader.Entity: Statement]
    private var pendingFills: [SyncPageReader.Fill] = []
    private var pendingOrders: [SyncPageReader.Order] = []
    /// Rows to a statement of `fills` and `orders` (16 columns each at most: 2,048 variables,
    /// under SQLite's limit of 32,766). 128 rows ran 4 % fewer instructions than 32 in a full
    /// refresh: a statement journals the few pages it changes, whatever its number of rows.
    static let batch = 128
    /// The statements' text with `batch` rows to a statement (`CacheStore.oneRowSQL` has one), for
    /// the live tables and for a rebuild's logs: made once, not for every page.
    private static let batchedSQL = (live: CacheStore.writeSQL(staged: false, rows: batch), staged: CacheStore.writeSQL(staged: true, rows: batch))
    /// Where an empty page's (absent) bytes are: never read.
    nonisolated(unsafe) static let noBytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

    /// Statements writing to the live tables, or (`staged`) appending to a rebuild's logs.
    init(_ db: Database, staged: Bool) throws {
        self.db = db
        let sql = staged ? CacheStore.oneRowSQL.staged : CacheStore.oneRowSQL.live, batched = staged ? Self.batchedSQL.staged : Self.batchedSQL.live
        position = try db.cachedStatement(sql: sql.upsert["positions"]!)
        fill = try db.cachedStatement(sql: sql.upsert["fills"]!)
        order = try db.cachedStatement(sql: sql.upsert["orders"]!)
        fills = try db.cachedStatement(sql: batched.upsert["fills"]!)
        orders = try db.cachedStatement(sql: batched.upsert["orders"]!)
        deletes = [
            .position: try db.cachedStatement(sql: sql.delete["positions"]!),
            .fill: try db.cachedStatement(sql: sql.delete["fills"]!),
            .order: try db.cachedStatement(sql: sql.delete["orders"]!),
        ]
        pendingFills.reserveCapacity(Self.batch)
        pendingOrders.reserveCapacity(Self.batch)
    }

    /// As `apply(_:)` does with a decoded change: a tombstone deletes; otherwise the position, fill
    /// or order it carries (the first of them present) is written, or held back to be written
    /// with the next ones of its table (before that table's next tombstone, or at `flush`).
    func apply(_ change: SyncPageReader.Change, _ r: UnsafePointer<UInt8>) throws {
        if change.delete == true, let entity = change.entity, let id = change.id {
            switch entity {
            case .fill: try flushFills(r)
            case .order: try flushOrders(r)
            case .position: break
            }
            let s = deletes[entity]!
            text(s, 1, id, r)
            try run(s)
        } else if let p = change.position {
            let s = position
            text(s, 1, p.id, r); text(s, 2, p.symbol, r); int(s, 3, p.qty); text(s, 4, p.avgPrice, r); real(s, 5, p.updatedAt.timeIntervalSince1970)
            try run(s)
        } else if let f = change.fill {
            pendingFills.append(f)
            if pendingFills.count == Self.batch { try flushFills(r) }
        } else if let o = change.order {
            pendingOrders.append(o)
            if pendingOrders.count == Self.batch { try flushOrders(r) }
        }
    }

    /// Writes the rows held back: at the page's end (before its cursor is written).
    func flush(_ r: UnsafePointer<UInt8>) throws {
        try flushFills(r)
        try flushOrders(r)
    }

    private func flushFills(_ r: UnsafePointer<UInt8>) throws {
        try flush(&pendingFills, batched: fills, single: fill, columns: Self.fillColumns) { bind($0, to: $1, at: $2, r) }
    }

    private func flushOrders(_ r: UnsafePointer<UInt8>) throws {
        try flush(&pendingOrders, batched: orders, single: order, columns: Self.orderColumns) { bind($0, to: $1, at: $2, r) }
    }

    static let fillColumns = Int32(CacheStore.entityColumnNames["fills"]!.split(separator: ",").count)
    static let orderColumns = Int32(CacheStore.entityColumnNames["orders"]!.split(separator: ",").count)

    /// A table's rows held back, in order: a whole batch in one statement, fewer one by one.
    private func flush<Row>(
        _ pending: inout [Row], batched: Statement, single: Statement, columns: Int32,
        _ bind: (Row, Statement, Int32) -> Void
    ) throws {
        defer { pending.removeAll(keepingCapacity: true) }
        if pending.count == Self.batch {
            for (k, row) in pending.enumerated() { bind(row, batched, Int32(k) * columns) }
            try run(batched)
        } else {
            for row in pending {
                bind(row, single, 0)
                try run(single)
            }
        }
    }

    /// A fill's 7 columns, in `entityColumns`' order, after the first `at` parameters.
    private func bind(_ f: SyncPageReader.Fill, to s: Statement, at n: Int32, _ r: UnsafePointer<UInt8>) {
        text(s, n + 1, f.id, r); text(s, n + 2, f.orderID, r); text(s, n + 3, f.symbol, r); text(s, n + 4, f.side, r)
        int(s, n + 5, f.qty); text(s, n + 6, f.price, r); real(s, n + 7, f.filledAt.timeIntervalSince1970)
    }

    /// An order's 16 columns, in `entityColumns`' order, after the first `at` parameters.
    private func bind(_ o: SyncPageReader.Order, to s: Statement, at n: Int32, _ r: UnsafePointer<UInt8>) {
        text(s, n + 1, o.id, r); text(s, n + 2, o.clientOrderID, r); text(s, n + 3, o.symbol, r); text(s, n + 4, o.side, r)
        int(s, n + 5, o.qty); text(s, n + 6, o.type, r); text(s, n + 7, o.limitPrice, r); text(s, n + 8, o.tif, r)
        text(s, n + 9, o.status, r); int(s, n + 10, o.filledQty); text(s, n + 11, o.avgFillPrice, r); text(s, n + 12, o.rejectCode, r)
        text(s, n + 13, o.mode, r); real(s, n + 14, o.notAfter?.timeIntervalSince1970); real(s, n + 15, o.createdAt.timeIntervalSince1970)
        real(s, n + 16, o.updatedAt.timeIntervalSince1970)
    }

    /// Text from the page's bytes (SQLITE_STATIC: the page outlives the step; `clear` unbinds).
    private func text(_ s: Statement, _ index: Int32, _ range: Range<Int>?, _ r: UnsafePointer<UInt8>) {
        guard let range else { sqlite3_bind_null(s.sqliteStatement, index); return }
        sqlite3_bind_text(
            s.sqliteStatement, index, UnsafeRawPointer(r + range.lowerBound).assumingMemoryBound(to: CChar.self),
            Int32(range.count), nil)
    }

    private func int(_ s: Statement, _ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(s.sqliteStatement, index, value)
    }

    private func real(_ s: Statement, _ index: Int32, _ value: Double?) {
        guard let value else { sqlite3_bind_null(s.sqliteStatement, index); return }
        sqlite3_bind_double(s.sqliteStatement, index, value)
    }

    private func run(_ s: Statement) throws {
        let code = sqlite3_step(s.sqliteStatement)
        sqlite3_reset(s.sqliteStatement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: s.sql)
        }
    }

    /// Unbinds the page's bytes from the cached statements before the page goes; rows held back
    /// (a page that failed half-way) are dropped with it.
    func clear() {
        pendingFills.removeAll()
        pendingOrders.removeAll()
        for s in [position, fill, order, fills, orders] + deletes.values {
            sqlite3_reset(s.sqliteStatement)
            sqlite3_clear_bindings(s.sqliteStatement)
        }
    }
}

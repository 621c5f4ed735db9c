import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain
import Testing

@testable import RaxxSandbox

/// The order and position records read their columns by name (`Columns`), from rows as the
/// database holds them, in whatever order a query selects them; a value no case of its enum has
/// is an error naming where it is, never a default. The ledger's reads of the order path go
/// through them, and through GRDB's `Row` by name. `ColumnRow`, which the two hot readers read
/// in place through, refuses what it cannot read.
@Suite struct RecordRowTests {
    static let orderTable = """
        CREATE TABLE orders (id TEXT, account_id TEXT, client_order_id TEXT, symbol TEXT, side TEXT, qty INTEGER, type TEXT,
            limit_price_ticks INTEGER, tif TEXT, status TEXT, filled_qty INTEGER, avg_fill_price_ticks INTEGER, reject_code TEXT,
            mode TEXT, not_after REAL, created_at REAL, updated_at REAL)
        """

    /// Orders as the database holds them: one of each shape, one with a status no case has
    /// ('renamed') and one with no side.
    static func orders() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: orderTable + """
                    ;
                    INSERT INTO orders VALUES ('ord_1', 'acc_1', 'c-1', 'AAPL', 'buy', 5, 'limit', 42100, 'gtc', 'partially_filled', 2, 42050,
                        NULL, 'paper', 1795000100, 1795000000.25, 1795000001);
                    INSERT INTO orders VALUES ('ord_2', 'acc_1', 'c-2', 'AAPL260116C00200000', 'sell', 1, 'market', NULL, 'day', 'rejected',
                        0, NULL, 'insufficient_buying_power', 'live', NULL, 1795000000, 1795000000);
                    INSERT INTO orders VALUES ('ord_3', 'acc_1', 'c-3', 'SPY', 'buy', 1, 'market', NULL, 'day', 'renamed',
                        0, NULL, NULL, 'paper', NULL, 1795000000, 1795000000);
                    INSERT INTO orders VALUES ('ord_4', 'acc_1', 'c-4', 'SPY', NULL, 1, 'market', NULL, 'day', 'open',
                        0, NULL, NULL, 'paper', NULL, 1795000000, 1795000000);
                    """)
        }
        return queue
    }

    static let first = Components.Schemas.Order(
        id: "ord_1", clientOrderId: "c-1", symbol: "AAPL", side: .buy, qty: 5, _type: .limit, limitPrice: "4.21", tif: .gtc,
        status: .partiallyFilled, filledQty: 2, avgFillPrice: "4.205", rejectCode: nil, mode: .paper,
        notAfter: Date(timeIntervalSince1970: 1_795_000_100), createdAt: Date(timeIntervalSince1970: 1_795_000_000.25),
        updatedAt: Date(timeIntervalSince1970: 1_795_000_001))

    static let second = Components.Schemas.Order(
        id: "ord_2", clientOrderId: "c-2", symbol: "AAPL260116C00200000", side: .sell, qty: 1, _type: .market, limitPrice: nil, tif: .day,
        status: .rejected, filledQty: 0, avgFillPrice: nil, rejectCode: "insufficient_buying_power", mode: .live, notAfter: nil,
        createdAt: Date(timeIntervalSince1970: 1_795_000_000), updatedAt: Date(timeIntervalSince1970: 1_795_000_000))

    /// The same orders read as the ledger selects them (`columns`), with their columns in another
    /// order among others, and through the query interface.
    @Test func ordersReadByNameAsTheAPIShowsThem() throws {
        try Self.orders().read { db in
            let two = "WHERE id IN ('ord_1', 'ord_2') ORDER BY id"
            let selected = try OrderRecord.fetchAll(db, sql: "SELECT \(OrderRecord.columns) FROM orders \(two)")
            #expect(selected.map(\.api) == [Self.first, Self.second])
            let reversed = OrderRecord.Columns.allCases.reversed().map(\.name).joined(separator: ", ")
            let shuffled = try OrderRecord.fetchAll(db, sql: "SELECT 'x' AS extra, \(reversed), rowid AS page_key FROM orders \(two)")
            #expect(shuffled.map(\.api) == [Self.first, Self.second])
            let all = try OrderRecord.fetchAll(db, sql: "SELECT * FROM orders \(two)")
            #expect(all.map(\.api) == [Self.first, Self.second])
            let requested = try OrderRecord.filter(OrderRecord.Columns.id == "ord_2").fetchOne(db)
            #expect(requested?.api == Self.second)
            #expect(
                selected.first?.state(userID: "usr_1")
                    == OrderState(
                        id: "ord_1", account: "acc_1", userID: "usr_1", symbol: "AAPL", side: .buy, qty: 5, type: .limit, limit: 42100,
                        tif: .gtc, status: .partiallyFilled, filled: 2, averageFill: 42050, createdAt: 1_795_000_000.25))
        }
    }

    /// A stored value outside its enum (a status no case has, a side that is NULL) is refused,
    /// naming the table, the column and the value.
    @Test func aStoredValueOutsideItsEnumIsRefusedNamingWhereItIs() throws {
        try Self.orders().read { db in
            let renamed = #expect(throws: UnknownStoredValue.self) {
                try OrderRecord.fetchOne(db, sql: "SELECT \(OrderRecord.columns) FROM orders WHERE id = 'ord_3'")
            }
            #expect(
                renamed?.description == "orders.status holds 'renamed', which is not one of its values ("
                    + OrderStatus.allCases.map(\.rawValue).joined(separator: ", ") + ")")
            let null = #expect(throws: UnknownStoredValue.self) { try OrderRecord.filter(OrderRecord.Columns.id == "ord_4").fetchOne(db) }
            #expect(
                null?.description == "orders.side holds 'NULL', which is not one of its values ("
                    + OrderSide.allCases.map(\.rawValue).joined(separator: ", ") + ")")
        }
    }

    /// An alert whose type or side is none of the spec's, and a device opted into a type that is
    /// none of them, are refused naming the table, the column and the value: the feed does not
    /// drop the alert, nor the device list the type, without a word.
    @Test func anAlertOrADeviceHoldingAValueOutsideItsEnumIsRefused() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            func event(type: String, side: String?) throws -> Components.Schemas.Event {
                let row = try #require(
                    try Row.fetchOne(
                        db,
                        sql: """
                            SELECT 7 AS seq, ? AS type, 'Filled' AS title, NULL AS body, 'ord_1' AS order_id, 'AAPL' AS symbol, ? AS side,
                                1 AS qty, 42100 AS price_ticks, NULL AS reason, NULL AS expires_at, 1795000000 AS created_at
                            """, arguments: [type, side]))
                return try EventLog.event(row)
            }
            #expect(try event(type: "fill_confirmed", side: "buy").side == .buy)
            #expect(try event(type: "fill_confirmed", side: nil).side == nil)
            let type = #expect(throws: UnknownStoredValue.self) { try event(type: "renamed", side: "buy") }
            #expect(type?.description.hasPrefix("events.type holds 'renamed', which is not one of its values (") == true)
            let side = #expect(throws: UnknownStoredValue.self) { try event(type: "fill_confirmed", side: "short") }
            #expect(side?.description.hasPrefix("events.side holds 'short', which is not one of its values (buy, sell") == true)

            func device(alerts: String) throws -> Components.Schemas.Device {
                let record = try #require(
                    try DeviceRecord.fetchOne(
                        db,
                        sql: "SELECT 'dev_1' AS id, 'f111f111' AS token, 'sandbox' AS environment, NULL AS label, ? AS alerts, 1795000000 AS created_at",
                        arguments: [alerts]))
                return try record.api
            }
            #expect(try device(alerts: "fill_confirmed,security_alert").alerts == [.fillConfirmed, .securityAlert])
            let alert = #expect(throws: UnknownStoredValue.self) { try device(alerts: "fill_confirmed,renamed") }
            #expect(alert?.description.hasPrefix("device_tokens.alerts holds 'renamed', which is not one of its values (") == true)
        }
    }

    /// A query that selects fewer columns than a record reads is GRDB's error naming the column
    /// (an enum's column too, which is not read as NULL), never a crash or a default.
    @Test func aColumnTheRowLacksIsAnError() throws {
        try Self.orders().read { db in
            let withoutSide = OrderRecord.Columns.allCases.filter { $0 != .side }.map(\.name).joined(separator: ", ")
            let side = #expect(throws: RowDecodingError.self) {
                try OrderRecord.fetchOne(db, sql: "SELECT \(withoutSide) FROM orders WHERE id = 'ord_1'")
            }
            #expect(side?.description.contains(#"column not found: "side""#) == true, "\(String(describing: side))")
            let withoutQty = OrderRecord.Columns.allCases.filter { $0 != .qty }.map(\.name).joined(separator: ", ")
            let qty = #expect(throws: RowDecodingError.self) {
                try OrderRecord.fetchOne(db, sql: "SELECT \(withoutQty) FROM orders WHERE id = 'ord_1'")
            }
            #expect(qty?.description.contains(#"column not found: "qty""#) == true, "\(String(describing: qty))")
            #expect(throws: RowDecodingError.self) { try PositionRecord.fetchOne(db, sql: "SELECT id, symbol FROM orders") }
        }
    }

    @Test func positionsReadByNameAsTheAPIShowsThem() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE positions (id TEXT, account_id TEXT, symbol TEXT, qty INTEGER, avg_price_ticks INTEGER, updated_at REAL);
                    INSERT INTO positions VALUES ('pos_1', 'acc_1', 'AAPL', 10, 1872500, 1795000000.125);
                    INSERT INTO positions VALUES ('pos_2', 'acc_1', 'MSFT', -3, 5, 1795000000);
                    """)
        }
        try queue.read { db throws in
            let expected: [Components.Schemas.Position] = [
                .init(id: "pos_1", symbol: "AAPL", qty: 10, avgPrice: "187.25", updatedAt: Date(timeIntervalSince1970: 1_795_000_000.125)),
                .init(id: "pos_2", symbol: "MSFT", qty: -3, avgPrice: "0.0005", updatedAt: Date(timeIntervalSince1970: 1_795_000_000)),
            ]
            for sql in [
                "SELECT \(PositionRecord.columns) FROM positions ORDER BY id", "SELECT * FROM positions ORDER BY id",
                "SELECT updated_at, avg_price_ticks, qty, symbol, id FROM positions ORDER BY id",
            ] {
                #expect(try PositionRecord.fetchAll(db, sql: sql).map(\.api) == expected, "\(sql)")
            }
            #expect(
                try PositionRecord.filter(PositionRecord.Columns.symbol == "AAPL").fetchOne(db)?.holding
                    == Holding(id: "pos_1", symbol: "AAPL", qty: 10, averagePrice: 1_872_500))
        }
    }

    /// The order path's reads, on the sandbox's own schema: each reads its row by name.
    @Test func theLedgerReadsTheOrderPathByName() throws {
        let database = try SandboxDatabase(path: ":memory:")
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let t = now.timeIntervalSince1970
        try database.writer.write { db in
            let account = try Accounts.findOrCreate(db, email: "ledger@example.com", at: now, actor: "test")
            let a = account.accountID
            try db.execute(
                sql: """
                    INSERT INTO orders (id, account_id, client_order_id, symbol, side, qty, type, limit_price_ticks, tif, status, filled_qty,
                    avg_fill_price_ticks, reject_code, mode, not_after, request_hash, created_at, updated_at) VALUES
                    ('ord_1', ?, 'c-1', 'AAPL', 'buy', 5, 'limit', 42100, 'gtc', 'partially_filled', 2, 42050, NULL, 'paper', ?, 'hash-1', ?, ?),
                    ('ord_2', ?, 'c-2', 'SPY', 'buy', 3, 'market', NULL, 'day', 'open', 0, NULL, NULL, 'paper', NULL, NULL, ?, ?),
                    ('ord_3', ?, 'c-3', 'SPY', 'buy', 4, 'market', NULL, 'day', 'filled', 4, 10000, NULL, 'paper', NULL, NULL, ?, ?)
                    """, arguments: [a, t + 100, t + 0.25, t + 1, a, t, t, a, t, t])
            try db.execute(
                sql: "INSERT INTO positions (id, account_id, symbol, qty, avg_price_ticks, updated_at) VALUES ('pos_1', ?, 'AAPL', 2, 42050, ?)",
                arguments: [a, t])
            try db.execute(
                sql: """
                    INSERT INTO sessions (id, user_id, access_token_hash, access_expires_at, renewal_token_hash, created_at, expires_at, revoked_at)
                    VALUES ('ses_1', ?, 'a1', ?, 'r1', ?, ?, NULL), ('ses_2', ?, 'a2', ?, 'r2', ?, ?, ?)
                    """, arguments: [account.userID, t + 900, t, t + 86_400, account.userID, t + 900, t, t + 86_400, t - 5])
            let ledger = TradingLedger(db: db, notifier: database.notifier)

            #expect(
                try ledger.orderState(id: "ord_1")
                    == OrderState(
                        id: "ord_1", account: a, userID: account.userID, symbol: "AAPL", side: .buy, qty: 5, type: .limit, limit: 42100,
                        tif: .gtc, status: .partiallyFilled, filled: 2, averageFill: 42050, createdAt: t + 0.25))
            #expect(try ledger.orderState(id: "ord_none") == nil)
            let order = try ledger.order(id: "ord_1")
            #expect(order?.id == "ord_1" && order?.limitPrice == "4.21" && order?.avgFillPrice == "4.205" && order?.status == .partiallyFilled)
            #expect(order?.notAfter == Date(timeIntervalSince1970: t + 100) && order?.createdAt == Date(timeIntervalSince1970: t + 0.25))
            #expect(try ledger.order(id: "ord_none") == nil)
            let byClientID = try ledger.order(account: a, clientOrderID: "c-1")
            #expect(byClientID?.id == "ord_1" && byClientID?.requestHash == "hash-1")
            let unhashed = try ledger.order(account: a, clientOrderID: "c-2")
            #expect(unhashed?.id == "ord_2" && unhashed?.requestHash == nil)
            #expect(try ledger.order(account: a, clientOrderID: "c-none").map { $0.id } == nil)
            #expect(
                try ledger.openBuys(account: a, excluding: nil).sorted { $0.symbol < $1.symbol }
                    == [OpenBuy(symbol: "AAPL", openQty: 3, limit: 42100), OpenBuy(symbol: "SPY", openQty: 3, limit: nil)])
            #expect(try ledger.openBuys(account: a, excluding: "ord_2") == [OpenBuy(symbol: "AAPL", openQty: 3, limit: 42100)])
            #expect(try ledger.holding(account: a, symbol: "AAPL") == Holding(id: "pos_1", symbol: "AAPL", qty: 2, averagePrice: 42050))
            #expect(try ledger.holding(account: a, symbol: "SPY") == nil)

            // Two switches: one whose deadline passed, one whose session was revoked before its deadline.
            let passed = ArmedSwitch(
                sessionID: "ses_1", userID: account.userID, accountID: a, timeout: 30, armedAt: Date(timeIntervalSince1970: t - 40),
                firesAt: Date(timeIntervalSince1970: t - 10))
            let revoked = ArmedSwitch(
                sessionID: "ses_2", userID: account.userID, accountID: a, timeout: 60, armedAt: Date(timeIntervalSince1970: t - 20),
                firesAt: Date(timeIntervalSince1970: t + 40))
            try ledger.saveSwitch(passed)
            try ledger.saveSwitch(revoked)
            #expect(try ledger.armedSwitch(session: "ses_1") == passed)
            #expect(try ledger.armedSwitch(session: "ses_none") == nil)
            let due = [DueSwitch(armed: passed, sessionEnded: false), DueSwitch(armed: revoked, sessionEnded: true)]
            #expect(try ledger.dueSwitches(now: now, account: nil) == due)
            #expect(try ledger.dueSwitches(now: now, account: a) == due)
            #expect(try ledger.dueSwitches(now: now, account: "acc_other") == [])
        }
    }

    /// What cannot be read in place is an error naming the column, never a crash: a NULL where a
    /// value must be, a column the row does not have. (Text read as a number is SQLite's
    /// conversion, as through a `Row`.)
    @Test func unreadableColumnsAreErrorsInPlace() throws {
        let queue = try DatabaseQueue()
        try queue.read { db in
            let statement = try db.makeStatement(sql: "SELECT NULL AS qty, 'ten' AS price, 'filled' AS status")
            for (what, read) in [
                ("qty", { (row: ColumnRow) in _ = try row.decode(Int64.self, atIndex: 0) }),
                ("no column 3", { (row: ColumnRow) in _ = try row.decode(String.self, atIndex: 3) }),
                ("no column -1", { (row: ColumnRow) in _ = try row.decode(String.self, atIndex: -1) }),
            ] {
                let error = #expect(throws: DatabaseError.self, "\(what)") { try statement.allRows(arguments: [], read) }
                #expect(error?.message?.contains(what) == true, "\(String(describing: error))")
            }
            // Read as they are: a NULL as nil, text as text.
            let fine = try statement.allRows(arguments: []) { row in
                (try row.decode(Int64?.self, atIndex: 0), try row.decode(String.self, atIndex: 1), try row.decode(String.self, atIndex: 2))
            }
            #expect(fine.count == 1 && fine.first?.0 == nil && fine.first?.1 == "ten" && fine.first?.2 == "filled")
            // A statement with no row reads none, and a statement stopped early is ready to run again.
            #expect(try db.makeStatement(sql: "SELECT 1 WHERE 0").allRows(arguments: []) { _ in 1 }.isEmpty)
            try statement.eachRow(arguments: []) { _ in false }
            #expect(try statement.allRows(arguments: []) { try $0.decode(String.self, atIndex: 2) } == ["filled"])
        }
    }
}

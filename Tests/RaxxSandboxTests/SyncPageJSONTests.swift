import Foundation
import GRDB
import PropertyBased
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxTestSupport
import RaxxWire
import Testing

@testable import RaxxSandbox

/// Sync pages are written as JSON straight from the rows; a client reads them with the generated
/// types. These hold that JSON to what the generated types would have said about the same rows.
@Suite struct SyncPageJSONTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000.25)

    /// An account whose rows carry awkward values: decimals of every length (and negative), NULL
    /// optionals, strings needing escapes, unicode, an upsert whose row is
    /// gone and a tombstone.
    static func awkwardDatabase() throws -> (SandboxDatabase, String) {
        let database = try SandboxDatabase(path: ":memory:")
        let account = try database.writer.write { db -> String in
            let account = try Accounts.findOrCreate(db, email: "awkward@example.com", at: Self.now, actor: "test").accountID
            let t = now.timeIntervalSince1970
            let positions: [(String, String, Int64, Int64, Double)] = [
                ("pos_1", "AAPL", 10, 1_872_500, t), ("pos_2", "Q\"uote\\back/slash", -3, 5, t + 0.125),
                ("pos_3", "ÄÖÜ€😀\u{7}\n\t\r", 0, -12_345, 1_000_000.5), ("pos_4", "MSFT", 1, 0, t + 86_400 * 400),
            ]
            for p in positions {
                try db.execute(
                    sql: "INSERT INTO positions (id, account_id, symbol, qty, avg_price_ticks, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [p.0, account, p.1, p.2, p.3, p.4])
                try ChangeLog.record(db, account: account, .position, p.0, at: now)
            }
            try db.execute(
                sql: """
                    INSERT INTO orders (id, account_id, client_order_id, symbol, side, qty, type, limit_price_ticks, tif, status, filled_qty,
                    avg_fill_price_ticks, reject_code, mode, not_after, created_at, updated_at) VALUES
                    ('ord_1', ?, 'c-1', 'AAPL', 'buy', 5, 'limit', 42100, 'gtc', 'partially_filled', 2, 42050, NULL, 'paper', ?, ?, ?),
                    ('ord_2', ?, 'c:2.x_y-z', 'SPY', 'sell', 1, 'market', NULL, 'day', 'expired', 0, NULL, 'insufficient "funds" ✓', 'paper',
                     NULL, ?, ?)
                    """, arguments: [account, t + 10, t, t + 1.5, account, t - 0.75, t])
            try db.execute(
                sql: """
                    INSERT INTO fills (id, account_id, order_id, symbol, side, qty, price_ticks, filled_at) VALUES
                    ('fil_1', ?, 'ord_1', 'AAPL', 'buy', 2, 42050, ?), ('fil_2', ?, 'ord_2', 'SPY', 'sell', 1, 1, ?)
                    """, arguments: [account, t + 0.5, account, t + 2])
            for (entity, id) in [(ChangeEntity.order, "ord_1"), (.order, "ord_2"), (.fill, "fil_1"), (.fill, "fil_2")] {
                try ChangeLog.record(db, account: account, entity, id, at: now)
            }
            try ChangeLog.record(db, account: account, .fill, "fil_gone", at: now)  // an upsert whose row is gone
            try ChangeLog.record(db, account: account, .position, "pos_closed", deleted: true, at: now)  // a tombstone
            // Another account's change is never on this account's pages.
            let other = try Accounts.findOrCreate(db, email: "other@example.com", at: Self.now, actor: "test").accountID
            try ChangeLog.record(db, account: other, .fill, "fil_other", at: now)
            return account
        }
        return (database, account)
    }

    /// The page as the generated types would have carried it: the change log and each change's row
    /// read with GRDB and mapped as the sandbox mapped them before pages were written directly.
    static func expectedChanges(_ database: SandboxDatabase, account: String, after: Int64, limit: Int) throws -> [Components.Schemas.SyncChange] {
        try database.writer.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT seq, entity, entity_id, op FROM change_log WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                arguments: [account, after, limit])
            return try rows.map { row in
                let entity: String = row["entity"], id: String = row["entity_id"], upsert = (row["op"] as String) == "upsert"
                let position =
                    upsert && entity == "position"
                    ? try Row.fetchOne(db, sql: "SELECT \(PositionRecord.columns) FROM positions WHERE id = ?", arguments: [id]).map {
                        try TradingLedger.position($0)
                    } : nil
                let fill =
                    upsert && entity == "fill"
                    ? try Row.fetchOne(db, sql: "SELECT * FROM fills WHERE id = ?", arguments: [id]).map { try TradingLedger.fill($0) } : nil
                let order =
                    upsert && entity == "order"
                    ? try Row.fetchOne(db, sql: "SELECT \(OrderRecord.columns) FROM orders WHERE id = ?", arguments: [id]).map { try TradingLedger.order($0) }
                    : nil
                let deleted = position == nil && fill == nil && order == nil
                return .init(
                    seq: row["seq"], entity: .init(rawValue: entity) ?? .position, op: deleted ? .delete : .upsert, id: id,
                    position: position, fill: fill, order: order)
            }
        }
    }

    static func page(_ database: SandboxDatabase, account: String, after: Int64, limit: Int, reset: Bool = false) throws -> [UInt8] {
        try database.writer.read { db in
            try TradingLedger(db: db, notifier: database.notifier).changePage(account: account, after: after, limit: limit, reset: reset, asOf: now)
        }
    }

    /// Random rows (any text, any numbers, values outside the enums, NULL optionals, upserts of
    /// rows gone, tombstones, another account's changes) and random page bounds: the page the
    /// sandbox writes reads, through the generated decoder and through the client's fast reader
    /// (or its fallback), as the generated types would have carried those rows; a page with a
    /// value outside its enum is refused both ways.
    @Test func randomRowsReadAsTheGeneratedTypesWouldHaveCarriedThem() async throws {
        await propertyCheck(count: 60, input: Gen.uint64()) { seed throws in
            var random = ModelRandom(seed)
            let (database, account) = try Self.randomDatabase(&random)
            let after = Int64(random.int(0...4)), limit = random.int(1...40)
            // A value outside its enum is an error both ways (the page names where it is).
            let written = Result { try Self.page(database, account: account, after: after, limit: limit) }
            let carried = Result { try Self.expectedChanges(database, account: account, after: after, limit: limit) }
            guard case .success(let json) = written, case .success(let expected) = carried else {
                if case .failure(let error) = written, case .failure = carried {
                    #expect(error is UnknownStoredValue, "\(error)")
                } else {
                    Issue.record("one way read the page and the other refused it: \(written), \(carried)")
                }
                return
            }
            let decoded = try SyncPageReader.decode(json)
            #expect(decoded.changes == expected)
            let fast = try json.withUnsafeBytes { bytes in
                do { return try SyncPageReader.read(bytes) } catch is SyncPageReader.Unsupported { return try SyncPageReader.decode(bytes) }
            }
            #expect(fast == decoded)
        }
    }

    /// An account (and another) with random positions, fills and orders, each in the change log
    /// once or twice, some of them gone, and tombstones.
    static func randomDatabase(_ random: inout ModelRandom) throws -> (SandboxDatabase, String) {
        let database = try SandboxDatabase(path: ":memory:")
        let account = try database.writer.write { db -> String in
            let account = try Accounts.findOrCreate(db, email: "random@example.com", at: Self.now, actor: "test").accountID
            let other = try Accounts.findOrCreate(db, email: "other@example.com", at: Self.now, actor: "test").accountID
            // Times the sandbox keeps (seconds as a Double) that RFC 3339 carries exactly: whole,
            // or a binary fraction of a second.
            func time() -> Double { Double(random.int(-1_000_000_000...4_000_000_000)) + random.pick([0, 0.5, 0.25, 0.125, 0.75]) }
            func vocabulary(_ values: [String]) -> String { random.int(0...5) == 0 ? random.text(0...8) : random.pick(values) }
            func ticks() -> Int64 { random.bool() ? Int64(random.int(-10_000_000...10_000_000)) : random.int64() / 1_000 }
            for n in 0..<random.int(0...14) {
                let owner = random.int(0...6) == 0 ? other : account
                let id = "\(n)-" + random.text(0...10)
                switch random.int(0...3) {
                case 0:
                    try db.execute(
                        sql: "INSERT INTO positions (id, account_id, symbol, qty, avg_price_ticks, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                        arguments: [id, owner, random.text(1...21), random.int64(), ticks(), time()])
                    try ChangeLog.record(db, account: owner, .position, id, at: now)
                case 1:
                    try db.execute(
                        sql: """
                            INSERT INTO fills (id, account_id, order_id, symbol, side, qty, price_ticks, filled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            id, owner, random.text(1...12), random.text(1...21),
                            vocabulary(Components.Schemas.Side.allCases.map(\.rawValue)), random.int64(), ticks(), time(),
                        ])
                    try ChangeLog.record(db, account: owner, .fill, id, at: now)
                case 2:
                    try db.execute(
                        sql: """
                            INSERT INTO orders (id, account_id, client_order_id, symbol, side, qty, type, limit_price_ticks, tif, status, filled_qty,
                            avg_fill_price_ticks, reject_code, mode, not_after, created_at, updated_at)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            id, owner, random.text(1...36), random.text(1...21), vocabulary(Components.Schemas.Side.allCases.map(\.rawValue)),
                            random.int64(), vocabulary(Components.Schemas.OrderType.allCases.map(\.rawValue)),
                            random.bool() ? ticks() : nil, vocabulary(Components.Schemas.TimeInForce.allCases.map(\.rawValue)),
                            vocabulary(Components.Schemas.OrderStatus.allCases.map(\.rawValue)), random.int64(),
                            random.bool() ? ticks() : nil, random.bool() ? random.text(1...16) : nil,
                            vocabulary(Components.Schemas.TradingMode.allCases.map(\.rawValue)), random.bool() ? time() : nil,
                            time(), time(),
                        ])
                    try ChangeLog.record(db, account: owner, .order, id, at: now)
                default:
                    // A change whose row is gone, or a tombstone.
                    try ChangeLog.record(db, account: owner, random.pick([ChangeEntity.position, .fill, .order]), id, deleted: random.bool(), at: now)
                }
            }
            return account
        }
        return (database, account)
    }

    /// A stored value outside its enum (an order status no case has: the column has no CHECK) is
    /// an error naming the table, the column and the value, in the sync page and in the records
    /// the handlers read: never a default (it read as pending).
    @Test func aStoredValueOutsideItsEnumIsAnErrorNamingWhereItIs() throws {
        let database = try SandboxDatabase(path: ":memory:")
        let account = try database.writer.write { db -> String in
            let account = try Accounts.findOrCreate(db, email: "odd@example.com", at: Self.now, actor: "test").accountID
            try db.execute(
                sql: """
                    INSERT INTO orders (id, account_id, client_order_id, symbol, side, qty, type, tif, status, filled_qty, mode, created_at, updated_at)
                    VALUES ('o1', ?, 'c1', 'AAPL', 'buy', 1, 'market', 'day', 'suspended', 0, 'paper', 0, 0)
                    """, arguments: [account])
            try ChangeLog.record(db, account: account, .order, "o1", at: Self.now)
            return account
        }
        let said =
            "orders.status holds 'suspended', which is not one of its values ("
            + Components.Schemas.OrderStatus.allCases.map(\.rawValue).joined(separator: ", ") + ")"
        let page = #expect(throws: UnknownStoredValue.self) { try Self.page(database, account: account, after: 0, limit: 10) }
        #expect(page?.description == said)
        let record = #expect(throws: UnknownStoredValue.self) {
            try database.writer.read { db in try OrderRecord.fetchOne(db, sql: "SELECT \(OrderRecord.columns) FROM orders") }
        }
        #expect(record?.description == said)
    }

    @Test func aPageReadsAsTheGeneratedTypesWouldHaveCarriedIt() throws {
        let (database, account) = try Self.awkwardDatabase()
        let json = try Self.page(database, account: account, after: 0, limit: 100)
        let page = try SyncPageReader.decode(json)
        let expected = try Self.expectedChanges(database, account: account, after: 0, limit: 100)
        #expect(expected.count == 10)
        #expect(page.changes == expected)
        #expect(page.cursor == expected.last?.seq && !page.hasMore && !page.reset && page.asOf == Self.now)
        // The awkward values themselves, as a client sees them.
        let positions = page.changes.compactMap(\.position)
        #expect(positions.map(\.avgPrice) == ["187.25", "0.0005", "-1.2345", "0.00"])
        #expect(positions.map(\.symbol) == ["AAPL", "Q\"uote\\back/slash", "ÄÖÜ€😀\u{7}\n\t\r", "MSFT"])
        let orders = page.changes.compactMap(\.order)
        #expect(orders.map(\.limitPrice) == ["4.21", nil] && orders.map(\.avgFillPrice) == ["4.205", nil])
        #expect(orders.map(\.status) == [.partiallyFilled, .expired] && orders.map(\.rejectCode) == [nil, "insufficient \"funds\" ✓"])
        #expect(orders.map(\.notAfter) == [Date(timeIntervalSince1970: Self.now.timeIntervalSince1970 + 10), nil])
        #expect(page.changes.compactMap(\.fill).map(\.side) == [.buy, .sell])
        #expect(page.changes.suffix(2).map(\.op) == [.delete, .delete] && page.changes.suffix(2).allSatisfy { $0.fill == nil && $0.position == nil })
    }

    @Test func theBytesAreTheGeneratedEncodingWithoutItsWhitespace() throws {
        let (database, account) = try Self.awkwardDatabase()
        let json = try Self.page(database, account: account, after: 0, limit: 100)
        // Re-encoded by the generated types (sorted keys, as the server's converter does), the
        // decoded page gives the same document: no key, value or absent optional differs.
        let page = try SyncPageReader.decode(json)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let transcoder = RFC3339DateTranscoder()
        encoder.dateEncodingStrategy = .custom { date, e in
            var c = e.singleValueContainer(); try c.encode(try transcoder.encode(date))
        }
        let reencoded = try encoder.encode(page)
        // Both documents parsed and written again one way (sorted keys) must be the same bytes.
        func canonical(_ data: Data) throws -> Data {
            try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: data), options: [.sortedKeys])
        }
        let ours = try canonical(Data(json)), theirs = try canonical(reencoded)
        #expect(String(decoding: ours, as: UTF8.self) == String(decoding: theirs, as: UTF8.self))
        #expect(ours.count > 2_000)
        #expect(String(decoding: json, as: UTF8.self).contains(#""symbol":"Q\"uote\\back/slash""#))
    }

    /// The page's own fields come before its changes, which end the page: a client knows where the
    /// next page starts without reading them.
    @Test func thePagesFieldsComeBeforeItsChanges() throws {
        let (database, account) = try Self.awkwardDatabase()
        for (after, limit) in [(0, 100), (0, 3), (1_000, 10)] as [(Int64, Int)] {
            let text = String(decoding: try Self.page(database, account: account, after: after, limit: limit), as: UTF8.self)
            let changes = try #require(text.range(of: #","changes":["#))
            let fields = text[..<changes.lowerBound]
            #expect(
                fields.hasPrefix(#"{"as_of":""#) && fields.contains(#""cursor":"#) && fields.contains(#""has_more":"#)
                    && fields.contains(#""reset":"#))
            #expect(text.hasSuffix("]}"))
            #expect(!text[changes.upperBound...].contains(#""cursor":"#))
        }
    }

    @Test func pagesFollowTheCursorWithHasMoreAndReset() throws {
        let (database, account) = try Self.awkwardDatabase()
        var cursor: Int64 = 0, seen: [Components.Schemas.SyncChange] = []
        while true {
            let page = try SyncPageReader.decode(try Self.page(database, account: account, after: cursor, limit: 3))
            #expect(page.changes == (try Self.expectedChanges(database, account: account, after: cursor, limit: 3)))
            seen += page.changes
            if page.changes.isEmpty { #expect(page.cursor == cursor) } else { #expect(page.cursor == page.changes.last?.seq) }
            cursor = page.cursor
            if !page.hasMore { break }
        }
        #expect(seen == (try Self.expectedChanges(database, account: account, after: 0, limit: 100)))
        let first = try SyncPageReader.decode(try Self.page(database, account: account, after: 0, limit: 3))
        #expect(first.total == Int64(seen.count), "a sync from the start is told how many changes it gets")
        let second = try SyncPageReader.decode(try Self.page(database, account: account, after: first.cursor, limit: 3))
        #expect(second.total == nil)
        let reset = try SyncPageReader.decode(try Self.page(database, account: account, after: 0, limit: 10, reset: true))
        #expect(reset.reset && !reset.hasMore && reset.total == Int64(seen.count))
        let empty = try SyncPageReader.decode(try Self.page(database, account: account, after: 1_000, limit: 10))
        #expect(empty.changes.isEmpty && empty.cursor == 1_000 && !empty.hasMore)
    }

    @Test func moneyBytesAreMoneyStrings() {
        var values: [Int64] = [0, 1, 5, 10, 99, 100, 1_000, 9_999, 10_000, 12_345, 1_872_500, 1_000_000_000_000, Int64.max, Int64.min + 1]
        var rng = SplitMix(seed: 9)
        for _ in 0..<2_000 { values.append(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 60)) }
        for v in values + values.map({ $0 == .min ? 0 : -$0 }) {
            var out: [UInt8] = []
            Money.append(ticks: v, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == Money.string(ticks: v))
        }
    }
}

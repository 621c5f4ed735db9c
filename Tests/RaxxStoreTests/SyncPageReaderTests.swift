import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxTestSupport
import Testing

@testable import RaxxStore
@testable import RaxxWire

/// The fast page reader writes the same rows as the generated decoder followed by `apply(_:)`,
/// whatever the page's shape; what it does not take it leaves, untouched, to the decoder.
@Suite struct SyncPageReaderTests {
    /// Every row of every synced table (and the cursors), as text: what two stores are compared by.
    func dump(_ store: CacheStore) throws -> [String] {
        try store.read { db in
            var out: [String] = []
            for table in ["positions", "fills", "orders", "rebuild_positions", "rebuild_fills", "rebuild_orders"] {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY id") {
                    out.append(
                        table + " "
                            + row.columnNames.map { name in
                                let value = row[name] as DatabaseValue
                                return "\(name)=\(value.storage)"
                            }.joined(separator: " "))
                }
            }
            let state = try Self.cursors(db)
            out.append("cursor=\(state.0) rebuild_cursor=\(state.1)")
            return out
        }
    }

    static func cursors(_ db: Database) throws -> (Int64, Int64) {
        let row = try Row.fetchOne(db, sql: "SELECT cursor, rebuild_cursor FROM sync_state")!
        return (row["cursor"], row["rebuild_cursor"])
    }

    /// Applies `json` both ways, to two stores in the same state; expects the same rows.
    func expectSameRows(_ json: String, rebuilding: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fast = try CacheStore.inMemory(), decoded = try CacheStore.inMemory()
        for store in [fast, decoded] {
            if rebuilding { try store.beginRebuild(accountID: "acc_1") }
        }
        let bytes = Array(json.utf8)
        let count = try bytes.withUnsafeBytes { try fast.apply(json: $0) }
        let page = try bytes.withUnsafeBytes { try SyncPageReader.decode($0) }
        try decoded.apply(page)
        #expect(count == page.changes.count, sourceLocation: sourceLocation)
        #expect(try dump(fast) == dump(decoded), sourceLocation: sourceLocation)
        let header = try bytes.withUnsafeBytes { try SyncPageReader.header(of: $0) }
        #expect(
            header == .init(cursor: page.cursor, hasMore: page.hasMore, reset: page.reset, asOf: page.asOf, total: page.total),
            sourceLocation: sourceLocation)
    }

    static let position = #"{"id":"pos_1","symbol":"AAPL","qty":-19,"avg_price":"-23.2213","updated_at":"2026-11-23T05:44:22.123Z"}"#
    static let fill =
        #"{"id":"fil_1","order_id":"ord_1","symbol":"AAPL261218C00160000","side":"sell","qty":3,"price":"1.05","filled_at":"2026-11-23T05:44:22Z"}"#
    static let order =
        #"""
        {"id":"ord_1","client_order_id":"c-1","symbol":"MSFT","side":"buy","qty":10,"type":"limit","limit_price":"410.5","tif":"gtc",\#
        "status":"partially_filled","filled_qty":4,"avg_fill_price":"410.25","reject_code":null,"mode":"paper","not_after":"2026-11-23T05:45:00.5Z",\#
        "created_at":"2026-11-23T05:44:00Z","updated_at":"2026-11-23T05:44:30.999Z"}
        """#

    @Test func aPlainPageWritesTheSameRows() throws {
        try expectSameRows(
            """
            {"changes":[
              {"seq":1,"entity":"position","op":"upsert","id":"pos_1","position":\(Self.position)},
              {"seq":2,"entity":"fill","op":"upsert","id":"fil_1","fill":\(Self.fill)},
              {"seq":3,"entity":"order","op":"upsert","id":"ord_1","order":\(Self.order)},
              {"seq":4,"entity":"fill","op":"delete","id":"fil_0"}
            ],"cursor":4,"has_more":true,"reset":false,"as_of":"2026-11-23T05:44:40Z"}
            """)
    }

    @Test func fieldsInAnyOrderWithWhitespaceNullsAndUnknownKeys() throws {
        // The page's fields first or last, changes' keys shuffled, optional values null or absent,
        // keys the reader does not know (with escapes, numbers and nesting) skipped.
        try expectSameRows(
            """
            { "as_of" : "2026-11-23T05:44:40.1Z" , "reset":true,"has_more" :false, "cursor": 9,
              "extra": {"a": [1, -2.5e3, true, null, "x\\"y\\u00e9"], "b": {}},
              "changes" : [
                { "position" : \(Self.position), "id":"pos_1", "op":"upsert", "entity":"position", "seq" : 7, "note": "\\n" },
                {"seq":8,"entity":"order","op":"upsert","id":"ord_2","position":null,"order":{"id":"ord_2","client_order_id":"c-2",
                 "symbol":"SPY","side":"sell","qty":1,"type":"market","tif":"day","status":"rejected","filled_qty":0,
                 "reject_code":"buying_power","mode":"paper","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:01Z"}},
                {"seq":9,"entity":"order","op":"delete","id":"ord_9","fill":null}
              ]
            }
            """, rebuilding: true)
    }

    @Test func unicodeTextAndExtremeIntegers() throws {
        try expectSameRows(
            """
            {"changes":[{"seq":999999999999999999,"entity":"position","op":"upsert","id":"pos_é✓","position":
            {"id":"pos_é✓","symbol":"ÅBC","qty":-999999999999999999,"avg_price":"0","updated_at":"1970-01-01T00:00:00Z"}}],
            "cursor":999999999999999999,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}
            """)
    }

    @Test func anEmptyPageMovesOnlyTheCursor() throws {
        try expectSameRows(#"{"changes":[],"cursor":0,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}"#)
    }

    @Test func aChangeCarryingSeveralEntitiesWritesTheFirstAsTheDecoderDoes() throws {
        // Not something the server sends; the two ways must still agree on it.
        try expectSameRows(
            """
            {"changes":[{"seq":1,"entity":"fill","op":"upsert","id":"x","fill":\(Self.fill),"position":\(Self.position)}],
            "cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}
            """)
    }

    /// Pages the fast reader leaves to the decoder: it throws, and the store is untouched.
    @Test(arguments: [
        #"{"changes":[{"seq":1,"entity":"position","op":"upsert","id":"p\"1"}],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}"#,
        #"{"changes":[{"seq":1.0,"entity":"position","op":"delete","id":"p1"}],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}"#,
        #"{"changes":[{"seq":1,"seq":2,"entity":"position","op":"delete","id":"p1"}],"cursor":1,"has_more":false,"#
            + #""reset":false,"as_of":"2026-11-23T05:44:40Z"}"#,
        #"{"changes":[{"seq":1,"entity":"trade","op":"delete","id":"p1"}],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}"#,
        #"{"changes":[{"seq":1,"entity":"position","op":"delete"}],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}"#,
        #"{"changes":[],"cursor":1,"has_more":false,"reset":false,"as_of":"yesterday"}"#,
        #"{"changes":[],"cursor":1,"has_more":false,"reset":false}"#,
        #"{"changes":[],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"} x"#,
        #"{"changes":[{"seq":1,"entity":"position","op":"delete","id":"p1"},],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}"#,
        "",
        // An unknown value nested past what the reader follows (a hostile page could nest until the stack ran out).
        #"{"changes":[{"seq":1,"entity":"position","op":"delete","id":"p1","x":"# + String(repeating: "[", count: 100_000)
            + String(repeating: "]", count: 100_000) + #"}],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}"#,
        Self.head + #"[],"x":"# + String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000) + "}",
    ])
    func leavesWhatItDoesNotTakeToTheDecoder(json: String) throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        let before = try dump(store)
        #expect(throws: SyncPageReader.Unsupported.self) {
            try Array(json.utf8).withUnsafeBytes { try store.apply(json: $0) }
        }
        #expect(try dump(store) == before)
    }

    @Test func bracketsAndQuotesInsideStringsDoNotEndTheChanges() throws {
        // The outline finds the end of the changes by their brackets and strings alone.
        try expectSameRows(
            #"""
            {"changes":[{"seq":1,"entity":"position","op":"upsert","id":"pos_1","note":"]}\"[{","extra":[{"a":"]"},[]],"position":\#(Self.position)}],\#
            "cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}
            """#
        )
    }

    @Test(arguments: [
        #"{"changes":[{"seq":1,"entity":"position","op":"delete","id":"p1"]}],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}"#,
        #"{"changes":[{"seq":1,"entity":"position","op":"delete","id":"p1"}}],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}"#,
        #"{"changes":[{"seq":1,"entity":"position","op":"delete","id":"p1"}"#,
        #"{"changes":[{"seq":1,"entity":"position","op":"delete","id":"p1"}],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z","x":"]"#,
    ])
    func mismatchedBracketsAreLeftToTheDecoder(json: String) throws {
        try leavesWhatItDoesNotTakeToTheDecoder(json: json)
        #expect(throws: (any Error).self) { try Array(json.utf8).withUnsafeBytes { try SyncPageReader.decode($0) } }
    }

    @Test func anEscapedStringIsReadByTheDecoderInstead() throws {
        // The refresher's fallback: the same page through the decoder writes the unescaped text.
        let json =
            #"""
            {"changes":[{"seq":1,"entity":"position","op":"upsert","id":"p1","position":{"id":"p1","symbol":"A\u0042C","qty":1,"avg_price":"1",\#
            "updated_at":"2026-11-23T05:44:22Z"}}],"cursor":1,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}
            """#
        let page = try Array(json.utf8).withUnsafeBytes { try SyncPageReader.decode($0) }
        #expect(page.changes.first?.position?.symbol == "ABC")
    }

    /// The sandbox's shape: the page's fields first, its changes last. The outline stops at the
    /// changes; what follows them is read when they are applied.
    static let head = #"{"as_of":"2026-11-23T05:44:40Z","cursor":4,"has_more":true,"reset":false,"total":9,"changes":"#

    @Test func fieldsBeforeTheChangesAreReadWithoutTheChanges() throws {
        let json = Self.head + #"[{"seq":4,"entity":"position","op":"upsert","id":"pos_1","position":\#(Self.position)}]}"#
        // The outline never looks past the changes' opening bracket: a page cut short after it
        // still gives its fields.
        let cut = Array((Self.head + #"[{"seq":4,"#).utf8)
        let outline = try cut.withUnsafeBytes { try SyncPageReader.outline(of: $0) }
        #expect(outline.header == .init(cursor: 4, hasMore: true, reset: false, asOf: Date(timeIntervalSince1970: 1_795_412_680), total: 9))
        #expect(outline.changesEnd == nil)
        try expectSameRows(json)
        try expectSameRows(Self.head + #"[], "unknown": {"a": [1]} } "#)
    }

    /// What follows the changes when the outline stopped at them: checked when they are applied,
    /// and left to the decoder with nothing written when it is not just unknown keys and the end.
    @Test(arguments: [
        Self.head + #"[],"cursor":5}"#,
        Self.head + #"[],"total":9}"#,
        Self.head + #"[],"changes":[]}"#,
        Self.head + #"[]} x"#,
        Self.head + #"[]"#,
        Self.head + #"[],}"#,
        Self.head + #"[{"seq":4,"entity":"position","op":"delete","id":"p1"}]"#,
    ])
    func whatFollowsTheChangesIsChecked(json: String) throws {
        try leavesWhatItDoesNotTakeToTheDecoder(json: json)
    }

    /// Fills and orders are written a batch of rows to a statement: pages of up to several
    /// batches, their ids drawn from a few (an id upserted twice in one batch, a tombstone between
    /// a batch's rows), applied as they come, into a first fill and into a rebuild's logs, write
    /// the same rows in the same order as the decoded page written change by change.
    @Test func batchedRowsAreWrittenAsTheChangesOneByOne() throws {
        enum Mode: CaseIterable { case live, firstFill, stagedRebuild }
        for seed in UInt64(0)..<40 {
            var random = ModelRandom(seed, plainText: true)
            // Up to 700 changes: a few batches (of 128 rows) of fills and of orders.
            var page = random.page(changes: 0...(seed < 20 ? 40 : 700))
            let ids = ["a", "b", "c", "d", "e", "f"]
            for k in page.changes.indices {
                let id = random.pick(ids)
                page.changes[k].id = id
                page.changes[k].position?.id = id
                page.changes[k].fill?.id = id
                page.changes[k].order?.id = id
                // Mostly upserts of fills and orders, whose batches this is about.
                if random.int(0...3) > 0, page.changes[k].op == .delete, page.changes[k].entity != .position {
                    page.changes[k].op = .upsert
                }
            }
            let bytes = try EncodingStyle.compactSorted.encode(page)
            for mode in Mode.allCases {
                let fast = try CacheStore.inMemory(), decoded = try CacheStore.inMemory()
                for store in [fast, decoded] {
                    switch mode {
                    case .live: break
                    case .firstFill: try store.beginRebuild(accountID: "acc_1")
                    case .stagedRebuild:
                        try store.beginRebuild(accountID: "acc_1")
                        let first = Array(
                            #"""
                            {"as_of":"2026-11-23T05:44:40Z","cursor":1,"has_more":false,"reset":false,"changes":[{"seq":1,"entity":"fill",\#
                            "op":"upsert","id":"a","fill":\#(Self.fill)}]}
                            """#
                            .utf8)
                        try first.withUnsafeBytes { _ = try store.apply(json: $0) }
                        try store.finishRebuild(accountID: "acc_1")
                        try store.recordSuccess(at: Date(timeIntervalSince1970: 1_790_000_000))
                        try store.beginRebuild(accountID: "acc_1")
                    }
                }
                let count = try bytes.withUnsafeBytes { try fast.apply(json: $0) }
                try decoded.apply(page)
                #expect(count == page.changes.count)
                #expect(try logs(fast) == logs(decoded), "seed \(seed), \(mode)")
                #expect(try dump(fast) == dump(decoded), "seed \(seed), \(mode)")
                if mode != .live {
                    for store in [fast, decoded] { try store.finishRebuild(accountID: "acc_1") }
                    #expect(try dump(fast) == dump(decoded), "seed \(seed), \(mode), finished")
                }
            }
        }
    }

    /// A page is written with its statement journals in memory, and the connection is left as it
    /// was for the writes after it (a rebuild's end among them), whether the page went in or not.
    @Test func aPageLeavesTheTemporaryStoreAsItWas() throws {
        let store = try CacheStore.inMemory()
        let page = Array(
            #"""
            {"as_of":"2026-11-23T05:44:40Z","cursor":1,"has_more":false,"reset":false,"changes":[{"seq":1,"entity":"fill","op":"upsert",\#
            "id":"a","fill":\#(Self.fill)}]}
            """#
            .utf8)
        try page.withUnsafeBytes { _ = try store.apply(json: $0) }
        #expect(try store.write { try Int.fetchOne($0, sql: "PRAGMA temp_store") } == 0)
        let broken = Array(
            #"""
            {"as_of":"2026-11-23T05:44:40Z","cursor":2,"has_more":false,"reset":false,"changes":[{"seq":2,"entity":"fill","op":"upsert",\#
            "id":"b","fill":{"id":"b"}}]}
            """#
            .utf8)
        #expect(throws: (any Error).self) { try broken.withUnsafeBytes { _ = try store.apply(json: $0) } }
        #expect(try store.write { try Int.fetchOne($0, sql: "PRAGMA temp_store") } == 0)
        #expect(try dump(store).filter { $0.hasPrefix("fills ") }.count == 1)
    }

    /// A rebuild's logs in the order they were written (each id's last change wins by it).
    func logs(_ store: CacheStore) throws -> [String] {
        try store.read { db in
            try ["rebuild_positions", "rebuild_fills", "rebuild_orders"].flatMap { table in
                try Row.fetchAll(db, sql: "SELECT rowid, * FROM \(table) ORDER BY rowid").map { "\(table) \($0)" }
            }
        }
    }
}

import Foundation
import RaxxAPI
import RaxxCore

/// Reads a sync page's JSON (the body of `GET /api/sync`) straight from its bytes, without building
/// the generated Codable values: a full refresh spent most of its time in JSONDecoder, building
/// millions of values only to copy their fields into SQLite.
///
/// It takes what the server writes: the page's fields and each change's in any order, unknown keys
/// skipped, `null` for absent optional values. Anything else it does not guess at: a string with an
/// escape, a number with a fraction or exponent, a duplicated key, a value of an unexpected kind or
/// an enum value it does not know throws `SyncPageReader.Unsupported`, and the caller decodes that
/// page through the generated types instead, which accept or refuse it exactly as before. So a page
/// is applied the same whichever way it was read.
public enum SyncPageReader {
    /// The page holds something this reader leaves to the generated decoder.
    public struct Unsupported: Error, Equatable {
        public let offset: Int
        public let reason: String
    }

    /// Decodes a page as the generated client does (JSONDecoder, dates by the shared transcoder):
    /// for the pages the fast reader leaves alone.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Components.Schemas.SyncPage {
        try WireJSON.decoder().decode(Components.Schemas.SyncPage.self, from: Data(bytes))
    }

    /// As `decode(_:)`, for a page's bytes in an array.
    public static func decode(_ bytes: [UInt8]) throws -> Components.Schemas.SyncPage {
        try WireJSON.decoder().decode(Components.Schemas.SyncPage.self, from: Data(bytes))
    }

    /// The page's own fields (its changes are read while they are applied).
    public struct Header: Sendable, Equatable {
        public var cursor: Int64
        public var hasMore: Bool
        public var reset: Bool
        public var asOf: Date
        /// On the first page of a sync from the start: how many changes the whole sync sends.
        public var total: Int64? = nil
    }

    public enum Entity: Sendable { case position, fill, order }

    /// One change, its strings as byte ranges of the page (seq, entity, op and id always there
    /// once read).
    public struct Change {
        public internal(set) var seq: Int64?
        public internal(set) var entity: Entity?
        public internal(set) var delete: Bool?
        public internal(set) var id: Range<Int>?
        public internal(set) var position: Position?
        public internal(set) var fill: Fill?
        public internal(set) var order: Order?
    }

    public struct Position {
        public let id: Range<Int>, symbol: Range<Int>, qty: Int64, avgPrice: Range<Int>, updatedAt: Date
    }

    public struct Fill {
        public let id: Range<Int>, orderID: Range<Int>, symbol: Range<Int>, side: Range<Int>, qty: Int64, price: Range<Int>
        public let filledAt: Date
    }

    public struct Order {
        public let id: Range<Int>, clientOrderID: Range<Int>, symbol: Range<Int>, side: Range<Int>, qty: Int64, type: Range<Int>
        public let limitPrice: Range<Int>?, tif: Range<Int>, status: Range<Int>, filledQty: Int64, avgFillPrice: Range<Int>?
        public let rejectCode: Range<Int>?, mode: Range<Int>, notAfter: Date?, createdAt: Date, updatedAt: Date
    }

    /// The page's fields, and where its changes start. When all the fields come before the
    /// changes (as the sandbox writes a page), the reading stops there: the changes, and whatever
    /// follows them, are read and checked when they are applied (`changes`). Otherwise the changes
    /// are skipped by their brackets, to read the fields after them.
    static func header(_ r: inout Reader) throws -> Outline {
        var cursor: Int64?, hasMore: Bool?, reset: Bool?, asOf: Date?, total: Int64??, changes: Range<Int>?
        var early: Outline? = nil
        do {
            try r.object { r, key in
                switch key {
                case WireKeys.Page.changes:
                    guard changes == nil else { throw r.unsupported("changes twice") }
                    r.skipWhitespace()
                    let start = r.i
                    guard r.peekByte() == UInt8(ascii: "[") else { throw r.unsupported("changes is not an array") }
                    if let cursor, let hasMore, let reset, let asOf {
                        early = Outline(
                            header: Header(cursor: cursor, hasMore: hasMore, reset: reset, asOf: asOf, total: total ?? nil),
                            changesStart: start, changesEnd: nil)
                        throw Stop()
                    }
                    // Only its end is found here; its grammar is checked when the changes are read.
                    try r.skipBrackets()
                    changes = start..<r.i
                case WireKeys.Page.cursor: try once(&cursor, r.int64(), r)
                case WireKeys.Page.hasMore: try once(&hasMore, r.bool(), r)
                case WireKeys.Page.reset: try once(&reset, r.bool(), r)
                case WireKeys.Page.asOf: try once(&asOf, r.dateValue(), r)
                case WireKeys.Page.total: try once(&total, r.nullable { try $0.int64() }, r)
                default: try r.skipValue()
                }
            }
        } catch is Stop {
            if let early { return early }
            throw r.unsupported("a page field is missing")
        }
        r.skipWhitespace()
        guard r.i == r.end else { throw r.unsupported("text after the page") }
        guard let cursor, let hasMore, let reset, let asOf, let changes else { throw r.unsupported("a page field is missing") }
        return Outline(
            header: Header(cursor: cursor, hasMore: hasMore, reset: reset, asOf: asOf, total: total ?? nil),
            changesStart: changes.lowerBound, changesEnd: changes.upperBound)
    }

    /// Ends the reading of a page's fields at its changes.
    private struct Stop: Error {}

    /// A page's fields, and where its changes are: read once, before the page is applied.
    public struct Outline: Sendable {
        public let header: Header
        /// Where the changes' array starts.
        public let changesStart: Int
        /// Where it ends, when the fields after it were read; nil when the reading stopped at the
        /// changes, every page field having come before them (`changes` checks that none follows).
        public let changesEnd: Int?
    }

    /// Reads the fields of the page in `bytes` (its changes only found: their start, and their end
    /// when fields follow them).
    public static func outline(of bytes: UnsafeRawBufferPointer) throws -> Outline {
        var r = Reader(bytes)
        return try Self.header(&r)
    }

    /// Reads the fields of the page in `bytes`.
    public static func header(of bytes: UnsafeRawBufferPointer) throws -> Header {
        try outline(of: bytes).header
    }

    /// Calls `body` with each change of the page in `json` (whose outline is `outline`), in order;
    /// answers their count. A change's byte ranges are offsets into `json`.
    public static func changes(in json: UnsafeRawBufferPointer, of outline: Outline, _ body: (Change) throws -> Void) throws -> Int {
        var reader = Reader(json)
        return try changes(&reader, of: outline, body)
    }

    /// Calls `body` with each change of the page, in order; answers their count. When the outline
    /// stopped at the changes, the rest of the page is read here: after them, no page field (it
    /// would be one the outline did not see) and nothing after the page's end.
    static func changes(_ r: inout Reader, of outline: Outline, _ body: (Change) throws -> Void) throws -> Int {
        r.i = outline.changesStart
        var count = 0
        try r.array { r in
            try body(try change(&r))
            count += 1
        }
        if let end = outline.changesEnd {
            // The outline found the array's end by its brackets alone: JSON ends it there too.
            guard r.i == end else { throw r.unsupported("the changes end elsewhere") }
            return count
        }
        while true {
            switch r.peekByte() ?? 0 {
            case UInt8(ascii: ","):
                r.i += 1
                let key = r.bytes(try r.string())
                try r.expect(UInt8(ascii: ":"))
                switch key {
                case WireKeys.Page.changes, WireKeys.Page.cursor, WireKeys.Page.hasMore, WireKeys.Page.reset, WireKeys.Page.asOf,
                    WireKeys.Page.total:
                    throw r.unsupported("a page field after the changes")
                default: try r.skipValue()
                }
            case UInt8(ascii: "}"):
                r.i += 1
                r.skipWhitespace()
                guard r.i == r.end else { throw r.unsupported("text after the page") }
                return count
            default:
                throw r.unsupported("expected ',' or '}'")
            }
        }
    }

    static func change(_ r: inout Reader) throws -> Change {
        var c = Change()
        var position: Position??, fill: Fill??, order: Order??
        try r.object { r, key in
            switch key {
            case WireKeys.Change.seq: try once(&c.seq, r.int64(), r)
            case WireKeys.Change.entity:
                let value = try r.string()
                guard c.entity == nil else { throw r.unsupported("entity twice") }
                switch r.bytes(value) {
                case WireKeys.Values.position: c.entity = .position
                case WireKeys.Values.fill: c.entity = .fill
                case WireKeys.Values.order: c.entity = .order
                default: throw r.unsupported("an unknown entity")
                }
            case WireKeys.Change.op:
                let value = try r.string()
                guard c.delete == nil else { throw r.unsupported("op twice") }
                switch r.bytes(value) {
                case WireKeys.Values.upsert: c.delete = false
                case WireKeys.Values.delete: c.delete = true
                default: throw r.unsupported("an unknown op")
                }
            case WireKeys.Change.id: try once(&c.id, r.string(), r)
            case WireKeys.Change.position: try once(&position, r.nullable { try Self.position(&$0) }, r)
            case WireKeys.Change.fill: try once(&fill, r.nullable { try Self.fill(&$0) }, r)
            case WireKeys.Change.order: try once(&order, r.nullable { try Self.order(&$0) }, r)
            default: try r.skipValue()
            }
        }
        guard c.seq != nil, c.entity != nil, c.delete != nil, c.id != nil else { throw r.unsupported("a change field is missing") }
        c.position = position ?? nil
        c.fill = fill ?? nil
        c.order = order ?? nil
        return c
    }

    static func position(_ r: inout Reader) throws -> Position {
        var id: Range<Int>?, symbol: Range<Int>?, qty: Int64?, avgPrice: Range<Int>?, updatedAt: Date?
        try r.object { r, key in
            switch key {
            case WireKeys.Position.id: try once(&id, r.string(), r)
            case WireKeys.Position.symbol: try once(&symbol, r.string(), r)
            case WireKeys.Position.qty: try once(&qty, r.int64(), r)
            case WireKeys.Position.avgPrice: try once(&avgPrice, r.string(), r)
            case WireKeys.Position.updatedAt: try once(&updatedAt, r.dateValue(), r)
            default: try r.skipValue()
            }
        }
        guard let id, let symbol, let qty, let avgPrice, let updatedAt else { throw r.unsupported("a position field is missing") }
        return Position(id: id, symbol: symbol, qty: qty, avgPrice: avgPrice, updatedAt: updatedAt)
    }

    static func fill(_ r: inout Reader) throws -> Fill {
        var id: Range<Int>?, orderID: Range<Int>?, symbol: Range<Int>?, side: Range<Int>?, qty: Int64?, price: Range<Int>?
        var filledAt: Date?
        try r.object { r, key in
            switch key {
            case WireKeys.Fill.id: try once(&id, r.string(), r)
            case WireKeys.Fill.orderID: try once(&orderID, r.string(), r)
            case WireKeys.Fill.symbol: try once(&symbol, r.string(), r)
            case WireKeys.Fill.side: try once(&side, r.member(of: Enums.side), r)
            case WireKeys.Fill.qty: try once(&qty, r.int64(), r)
            case WireKeys.Fill.price: try once(&price, r.string(), r)
            case WireKeys.Fill.filledAt: try once(&filledAt, r.dateValue(), r)
            default: try r.skipValue()
            }
        }
        guard let id, let orderID, let symbol, let side, let qty, let price, let filledAt else {
            throw r.unsupported("a fill field is missing")
        }
        return Fill(id: id, orderID: orderID, symbol: symbol, side: side, qty: qty, price: price, filledAt: filledAt)
    }

    static func order(_ r: inout Reader) throws -> Order {
        var id: Range<Int>?, clientOrderID: Range<Int>?, symbol: Range<Int>?, side: Range<Int>?, qty: Int64?, type: Range<Int>?
        var limitPrice: Range<Int>??, tif: Range<Int>?, status: Range<Int>?, filledQty: Int64?, avgFillPrice: Range<Int>??
        var rejectCode: Range<Int>??, mode: Range<Int>?, notAfter: Date??, createdAt: Date?, updatedAt: Date?
        try r.object { r, key in
            switch key {
            case WireKeys.Order.id: try once(&id, r.string(), r)
            case WireKeys.Order.clientOrderID: try once(&clientOrderID, r.string(), r)
            case WireKeys.Order.symbol: try once(&symbol, r.string(), r)
            case WireKeys.Order.side: try once(&side, r.member(of: Enums.side), r)
            case WireKeys.Order.qty: try once(&qty, r.int64(), r)
            case WireKeys.Order.type: try once(&type, r.member(of: Enums.orderType), r)
            case WireKeys.Order.limitPrice: try once(&limitPrice, r.nullable { try $0.string() }, r)
            case WireKeys.Order.tif: try once(&tif, r.member(of: Enums.tif), r)
            case WireKeys.Order.status: try once(&status, r.member(of: Enums.status), r)
            case WireKeys.Order.filledQty: try once(&filledQty, r.int64(), r)
            case WireKeys.Order.avgFillPrice: try once(&avgFillPrice, r.nullable { try $0.string() }, r)
            case WireKeys.Order.rejectCode: try once(&rejectCode, r.nullable { try $0.string() }, r)
            case WireKeys.Order.mode: try once(&mode, r.member(of: Enums.mode), r)
            case WireKeys.Order.notAfter: try once(&notAfter, r.nullable { try $0.dateValue() }, r)
            case WireKeys.Order.createdAt: try once(&createdAt, r.dateValue(), r)
            case WireKeys.Order.updatedAt: try once(&updatedAt, r.dateValue(), r)
            default: try r.skipValue()
            }
        }
        guard let id, let clientOrderID, let symbol, let side, let qty, let type, let tif, let status, let filledQty, let mode,
            let createdAt, let updatedAt
        else { throw r.unsupported("an order field is missing") }
        return Order(
            id: id, clientOrderID: clientOrderID, symbol: symbol, side: side, qty: qty, type: type, limitPrice: limitPrice ?? nil,
            tif: tif, status: status, filledQty: filledQty, avgFillPrice: avgFillPrice ?? nil, rejectCode: rejectCode ?? nil,
            mode: mode, notAfter: notAfter ?? nil, createdAt: createdAt, updatedAt: updatedAt)
    }

    /// Sets `slot` once: a key seen twice is left to the generated decoder.
    static func once<T>(_ slot: inout T?, _ value: T, _ r: Reader) throws {
        guard slot == nil else { throw r.unsupported("a key twice") }
        slot = value
    }

    /// The enums' values, from the generated types (so a value added to the spec is known here too).
    enum Enums {
        static let side = values(Components.Schemas.Side.allCases.map(\.rawValue))
        static let orderType = values(Components.Schemas.OrderType.allCases.map(\.rawValue))
        static let tif = values(Components.Schemas.TimeInForce.allCases.map(\.rawValue))
        static let status = values(Components.Schemas.OrderStatus.allCases.map(\.rawValue))
        static let mode = values(Components.Schemas.TradingMode.allCases.map(\.rawValue))

        static func values(_ raw: [String]) -> [ByteKey] { raw.map { ByteKey(Array($0.utf8)) } }
    }

    /// An enum value's bytes, matched against a slice of the page.
    struct ByteKey: Sendable {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        @inline(__always)
        static func ~= (key: ByteKey, slice: UnsafeRawBufferPointer) -> Bool {
            guard key.bytes.count == slice.count else { return false }
            return key.bytes.withUnsafeBytes { memcmp($0.baseAddress!, slice.baseAddress!, slice.count) == 0 }
        }
    }

    /// A cursor over the page's bytes.
    struct Reader {
        /// The deepest an unknown value is followed (the server's values are a few levels deep).
        static let maxDepth = 64
        let base: UnsafePointer<UInt8>
        let end: Int
        var i = 0
        private nonisolated(unsafe) static let empty = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

        init(_ buffer: UnsafeRawBufferPointer) {
            // An empty buffer has no base address: point at one byte that is never read (end is 0).
            base = buffer.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) } ?? UnsafePointer(Self.empty)
            end = buffer.count
        }

        func unsupported(_ reason: String) -> Unsupported { Unsupported(offset: i, reason: reason) }

        /// The bytes of `range`, to match against keys and enum values.
        @inline(__always)
        func bytes(_ range: Range<Int>) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
        }

        func string(_ range: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self)
        }

        @inline(__always)
        mutating func skipWhitespace() {
            while i < end {
                switch base[i] {
                case 0x20, 0x0A, 0x0D, 0x09: i += 1
                default: return
                }
            }
        }

        /// The next byte after whitespace, or nil at the end.
        @inline(__always)
        mutating func peekByte() -> UInt8? {
            skipWhitespace()
            return i < end ? base[i] : nil
        }

        @inline(__always)
        mutating func expect(_ byte: UInt8) throws {
            guard peekByte() == byte else { throw expected(byte) }
            i += 1
        }

        /// The error of `expect`, out of its way (it runs for every string, key and object).
        @inline(never)
        func expected(_ byte: UInt8) -> Unsupported {
            unsupported("expected '\(Character(Unicode.Scalar(byte)))'")
        }

        /// An object's members, each handed over with its key (the value is the handler's to read).
        mutating func object(_ member: (inout Reader, UnsafeRawBufferPointer) throws -> Void) throws {
            try expect(UInt8(ascii: "{"))
            if peekByte() == UInt8(ascii: "}") { i += 1; return }
            while true {
                let key = bytes(try string())
                try expect(UInt8(ascii: ":"))
                try member(&self, key)
                switch peekByte() ?? 0 {
                case UInt8(ascii: ","): i += 1
                case UInt8(ascii: "}"): i += 1; return
                default: throw unsupported("expected ',' or '}'")
                }
            }
        }

        mutating func array(_ element: (inout Reader) throws -> Void) throws {
            try expect(UInt8(ascii: "["))
            if peekByte() == UInt8(ascii: "]") { i += 1; return }
            while true {
                try element(&self)
                switch peekByte() ?? 0 {
                case UInt8(ascii: ","): i += 1
                case UInt8(ascii: "]"): i += 1; return
                default: throw unsupported("expected ',' or ']'")
                }
            }
        }

        /// `null` (answered as nil), or the value `read` reads.
        mutating func nullable<T>(_ read: (inout Reader) throws -> T) throws -> T? {
            if peekByte() == UInt8(ascii: "n") {
                try literal("null")
                return nil
            }
            return try read(&self)
        }

        mutating func literal(_ word: StaticString) throws {
            let n = word.utf8CodeUnitCount
            guard i + n <= end, memcmp(base + i, word.utf8Start, n) == 0 else { throw unsupported("expected \(word)") }
            i += n
        }

        mutating func bool() throws -> Bool {
            switch peekByte() ?? 0 {
            case UInt8(ascii: "t"): try literal("true"); return true
            case UInt8(ascii: "f"): try literal("false"); return false
            default: throw unsupported("expected a boolean")
            }
        }

        /// A string without escapes or control characters, valid UTF-8: its bytes' range.
        mutating func string() throws -> Range<Int> {
            try expect(UInt8(ascii: "\""))
            let start = i
            // In locals, not in `i`: the loop runs over every byte of every string of the page.
            var j = start, high: UInt8 = 0
            // Eight bytes at a time while none of them is a quote, a backslash or a control
            // character; the bytes from the first word that holds one are read one by one below.
            var highWords: UInt64 = 0
            while end - j >= 8 {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self))
                guard Self.isPlain(word) else { break }
                highWords |= word
                j += 8
            }
            if highWords & Self.highBits != 0 { high = 0x80 }
            while j < end {
                let c = base[j]
                if c == UInt8(ascii: "\"") { break }
                if c == UInt8(ascii: "\\") || c < 0x20 { i = j; throw unsupported("an escape or control character in a string") }
                high |= c
                j += 1
            }
            i = j
            guard j < end else { throw unsupported("an unterminated string") }
            let range = start..<j
            i += 1
            if high >= 0x80 && String(validating: UnsafeBufferPointer(start: base + start, count: range.count), as: UTF8.self) == nil {
                throw unsupported("a string that is not UTF-8")
            }
            return range
        }

        static let highBits: UInt64 = 0x8080_8080_8080_8080
        static let ones: UInt64 = 0x0101_0101_0101_0101

        /// Whether none of a word's eight bytes is a quote, a backslash or below 0x20. (A byte's
        /// test can only be set wrongly above a byte whose test is set rightly: a word that fails
        /// holds one of them.)
        @inline(__always)
        static func isPlain(_ word: UInt64) -> Bool {
            func zeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highBits }
            let quote = zeroByte(word ^ (ones &* 0x22)), backslash = zeroByte(word ^ (ones &* 0x5C))
            let control = (word &- ones &* 0x20) & ~word & highBits
            return quote | backslash | control == 0
        }

        /// A string that is one of `values`.
        mutating func member(of values: [ByteKey]) throws -> Range<Int> {
            let range = try string()
            let slice = bytes(range)
            for value in values where value ~= slice { return range }
            throw unsupported("an unknown enum value")
        }

        /// An integer of at most 18 digits (no fraction, no exponent, no leading zero).
        mutating func int64() throws -> Int64 {
            skipWhitespace()
            var negative = false
            if i < end && base[i] == UInt8(ascii: "-") { negative = true; i += 1 }
            let start = i
            var value: Int64 = 0
            while i < end {
                let d = base[i] &- 0x30
                if d > 9 { break }
                value = value &* 10 &+ Int64(d)
                i += 1
            }
            let digits = i - start
            guard digits > 0, digits <= 18, !(digits > 1 && base[start] == 0x30) else { throw unsupported("an integer out of reach") }
            if i < end, base[i] == UInt8(ascii: ".") || base[i] == UInt8(ascii: "e") || base[i] == UInt8(ascii: "E") {
                throw unsupported("a number with a fraction or exponent")
            }
            return negative ? -value : value
        }

        /// A date-time string, read as the generated client reads it (the shared transcoder).
        mutating func dateValue() throws -> Date {
            let range = try string()
            guard let date = RFC3339.date(utf8: UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)) else {
                throw unsupported("not a date-time")
            }
            return date
        }

        /// Skips any JSON value (an unknown key's), checking it is well-formed. A value nested
        /// deeper than `maxDepth` is not recursed into (a hostile answer could exhaust the stack):
        /// it is left to the decoder, which refuses it past its own limit.
        mutating func skipValue(depth: Int = 0) throws {
            guard depth < Self.maxDepth else { throw unsupported("a value nested too deep") }
            switch peekByte() ?? 0 {
            case UInt8(ascii: "{"): try object { r, _ in try r.skipValue(depth: depth + 1) }
            case UInt8(ascii: "["): try array { r in try r.skipValue(depth: depth + 1) }
            case UInt8(ascii: "\""): try skipString()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber()
            default: throw unsupported("not a JSON value")
            }
        }

        /// Any well-formed string, escapes included.
        private mutating func skipString() throws {
            try expect(UInt8(ascii: "\""))
            let start = i
            var ascii = true
            while i < end {
                let c = base[i]
                if c == UInt8(ascii: "\"") { break }
                if c < 0x20 { throw unsupported("a control character in a string") }
                if c >= 0x80 { ascii = false }
                if c == UInt8(ascii: "\\") {
                    guard i + 1 < end else { break }
                    switch base[i + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        i += 2
                    case UInt8(ascii: "u"):
                        guard i + 6 <= end, (2..<6).allSatisfy({ base[i + $0].isASCIIHexDigit }) else { throw unsupported("a bad escape") }
                        i += 6
                    default: throw unsupported("a bad escape")
                    }
                    continue
                }
                i += 1
            }
            guard i < end else { throw unsupported("an unterminated string") }
            if !ascii && String(validating: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self) == nil {
                throw unsupported("a string that is not UTF-8")
            }
            i += 1
        }

        /// Skips the array or object starting here by its brackets and strings alone, without
        /// checking what is between them: a quick pass over a page's changes to find their end.
        mutating func skipBrackets() throws {
            var j = i, depth = 0
            while j < end {
                switch base[j] {
                case UInt8(ascii: "\""):
                    j += 1
                    while j < end && base[j] != UInt8(ascii: "\"") {
                        j += base[j] == UInt8(ascii: "\\") ? 2 : 1
                    }
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    depth += 1
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    depth -= 1
                    if depth == 0 { i = j + 1; return }
                default:
                    break
                }
                j += 1
            }
            i = end
            throw unsupported("an unterminated array or object")
        }

        /// A number by JSON's grammar.
        private mutating func skipNumber() throws {
            if base[i] == UInt8(ascii: "-") { i += 1 }
            func digits(_ r: inout Reader) -> Int {
                let start = r.i
                while r.i < r.end, (0x30...0x39).contains(r.base[r.i]) { r.i += 1 }
                return r.i - start
            }
            let start = i
            let n = digits(&self)
            guard n > 0, !(n > 1 && base[start] == 0x30) else { throw unsupported("a bad number") }
            if i < end, base[i] == UInt8(ascii: ".") {
                i += 1
                guard digits(&self) > 0 else { throw unsupported("a bad number") }
            }
            if i < end, base[i] == UInt8(ascii: "e") || base[i] == UInt8(ascii: "E") {
                i += 1
                if i < end, base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-") { i += 1 }
                guard digits(&self) > 0 else { throw unsupported("a bad number") }
            }
        }
    }
}

/// A key as the reader knows it (a string literal in a `case`), matched against a slice of the
/// page: no global to look up for each of the millions of keys a refresh reads.
func ~= (key: StaticString, slice: UnsafeRawBufferPointer) -> Bool {
    key.utf8CodeUnitCount == slice.count && memcmp(key.utf8Start, slice.baseAddress!, slice.count) == 0
}

import Foundation
import RaxxCore

/// One order as a trader writes it — from flags, or one JSON object per line on stdin with the
/// fields symbol, side, qty, type, limit_price, tif, client_order_id — validated before anything
/// is sent.
public struct OrderIntent: Sendable, Equatable {
    public var line: Int
    public var symbol: String
    public var side: String
    public var qty: Int64
    public var type: String
    public var limitPrice: String?
    public var tif: String
    public var clientOrderID: String

    static let fields: Set<String> = ["symbol", "side", "qty", "type", "limit_price", "tif", "client_order_id"]

    /// Validates one intent's fields; `line` names it in errors.
    public init(line: Int, symbol: String?, side: String?, qty: JSONScalar?, type: String?, limitPrice: JSONScalar?, tif: String?,
                clientOrderID: String?, newID: () -> String) throws(RaxxError) {
        func bad(_ field: String, _ message: String) -> RaxxError { RaxxError.badInput(line: line, field: field, message) }
        guard let symbol, !symbol.isEmpty else { throw bad("symbol", "is missing") }
        guard Self.isWellFormed(symbol: symbol) else {
            throw bad("symbol", "'\(symbol)' is neither a ticker (AAPL) nor an OCC option symbol (AAPL261218C00190000)")
        }
        guard let side else { throw bad("side", "is missing") }
        guard side == "buy" || side == "sell" else { throw bad("side", "must be buy or sell, not '\(side)'") }
        guard let qty else { throw bad("qty", "is missing") }
        let quantity: Int64
        switch qty {
        case .integer(let n): quantity = n
        default: throw bad("qty", "must be a whole number")
        }
        guard quantity > 0 else { throw bad("qty", "must be positive, not \(quantity)") }
        guard quantity <= 1_000_000 else { throw bad("qty", "must be at most 1,000,000, not \(quantity)") }
        let orderType = type ?? "market"
        guard orderType == "market" || orderType == "limit" else { throw bad("type", "must be market or limit, not '\(orderType)'") }
        var price: String? = nil
        if let limitPrice {
            switch limitPrice {
            case .string(let s): price = s
            case .integer(let n): price = String(n)
            case .number(let d): price = Decimal(d).description
            case .null: price = nil
            default: throw bad("limit_price", "must be a price such as 187.25")
            }
            if let p = price, !Self.isPrice(p) { throw bad("limit_price", "must be a positive price with at most four decimals, not '\(p)'") }
        }
        if orderType == "limit" && price == nil { throw bad("limit_price", "is required for a limit order") }
        if orderType == "market" && price != nil { throw bad("limit_price", "does not go with a market order") }
        let timeInForce = tif ?? "day"
        guard timeInForce == "day" || timeInForce == "gtc" else { throw bad("tif", "must be day or gtc, not '\(timeInForce)'") }
        let id = clientOrderID ?? newID()
        guard (1...64).contains(id.count), id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._:-".contains($0)) }) else {
            throw bad("client_order_id", "must be 1 to 64 letters, digits or . _ : -")
        }
        self.line = line
        self.symbol = symbol.uppercased()
        self.side = side
        self.qty = quantity
        self.type = orderType
        self.limitPrice = price
        self.tif = timeInForce
        self.clientOrderID = id
    }

    /// Parses JSON Lines: the whole batch is validated before any order is sent, and the first
    /// bad line stops it with its line number and field.
    public static func parse(jsonLines text: String, newID: () -> String) throws(RaxxError) -> [OrderIntent] {
        var intents: [OrderIntent] = []
        var seen: [String: Int] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let object = try? JSONDecoder().decode([String: JSONScalar].self, from: Data(trimmed.utf8)) else {
                throw RaxxError.badInput(line: line, "is not a JSON object of order fields")
            }
            if let unknown = object.keys.sorted().first(where: { !fields.contains($0) }) {
                throw RaxxError.badInput(line: line, field: unknown, "is not an order field (symbol, side, qty, type, limit_price, tif, client_order_id)")
            }
            func text(_ key: String) throws(RaxxError) -> String? {
                switch object[key] {
                case nil, .null: return nil
                case .string(let s): return s
                default: throw RaxxError.badInput(line: line, field: key, "must be a string")
                }
            }
            let intent = try OrderIntent(line: line, symbol: try text("symbol"), side: try text("side"), qty: object["qty"],
                                         type: try text("type"), limitPrice: object["limit_price"],
                                         tif: try text("tif"), clientOrderID: try text("client_order_id"), newID: newID)
            if let earlier = seen[intent.clientOrderID] {
                throw RaxxError.badInput(line: line, field: "client_order_id", "'\(intent.clientOrderID)' is already used on line \(earlier)")
            }
            seen[intent.clientOrderID] = line
            intents.append(intent)
        }
        guard !intents.isEmpty else { throw RaxxError.badInput("No orders on stdin: give one JSON object per line.") }
        return intents
    }

    static func isPrice(_ s: String) -> Bool {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].count <= 9, parts[0].allSatisfy(\.isWholeNumberASCII) else { return false }
        if parts.count == 2 { guard (1...4).contains(parts[1].count), parts[1].allSatisfy(\.isWholeNumberASCII) else { return false } }
        return s.contains(where: { $0 != "0" && $0 != "." })
    }

    /// A ticker (1–6 letters, an optional class suffix like BRK.B) or an OCC option symbol, compact
    /// or space-padded, with a real date and a C or P.
    static func isWellFormed(symbol: String) -> Bool {
        let s = symbol.uppercased()
        let ticker = s.split(separator: ".", omittingEmptySubsequences: false)
        if (1...2).contains(ticker.count), (1...6).contains(ticker[0].count), ticker[0].allSatisfy(\.isUppercaseASCIILetter),
           ticker.count == 1 || (ticker[1].count == 1 && ticker[1].allSatisfy(\.isUppercaseASCIILetter)) {
            return true
        }
        let compact = s.filter { $0 != " " }
        guard compact.count >= 16, compact.count <= 21 else { return false }
        let root = compact.dropLast(15), tail = Array(compact.suffix(15))
        guard (1...6).contains(root.count), root.allSatisfy(\.isUppercaseASCIILetter),
              tail[0..<6].allSatisfy(\.isWholeNumberASCII), tail[7..<15].allSatisfy(\.isWholeNumberASCII),
              tail[6] == "C" || tail[6] == "P",
              let month = Int(String(tail[2..<4])), let day = Int(String(tail[4..<6])), (1...12).contains(month), (1...31).contains(day)
        else { return false }
        return true
    }
}

extension Character {
    var isWholeNumberASCII: Bool { isASCII && isNumber }
    var isUppercaseASCIILetter: Bool { isASCII && isUppercase && isLetter }
}

/// A JSON value that may stand in an order field.
public enum JSONScalar: Decodable, Sendable, Equatable {
    case string(String), integer(Int64), number(Double), bool(Bool), null

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let i = try? c.decode(Int64.self) { self = .integer(i) }
        else if let d = try? c.decode(Double.self) { self = .number(d) }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else { self = .string(try c.decode(String.self)) }
    }
}

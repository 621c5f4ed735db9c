import Foundation
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire

/// One order as a trader writes it — from flags, or one JSON object per line on stdin with the
/// fields symbol, side, qty, type, limit_price, tif, client_order_id — validated before anything
/// is sent.
public struct OrderIntent: Sendable, Equatable {
    public var line: Int
    /// The canonical spelling (upper case; options in compact OCC form).
    public var symbol: String
    public var side: OrderSide
    public var qty: Int64
    public var type: OrderType
    public var limitPrice: String?
    public var tif: TimeInForce
    public var clientOrderID: String
    /// The client_order_id was made here, not given: the server cannot tell this order sent again
    /// from a new one (`BatchFingerprint`).
    public var idGenerated = false

    static let fields: Set<String> = ["symbol", "side", "qty", "type", "limit_price", "tif", "client_order_id"]
    /// The most a paper order may be for (the spec's maximum).
    public static let maximumQuantity: Int64 = 1_000_000

    /// An enum's values as a person reads them: "market or limit", "day or gtc".
    static func choices<E: CaseIterable & RawRepresentable>(_: E.Type) -> String where E.RawValue == String {
        let values = E.allCases.map(\.rawValue)
        return values.count < 2 ? values.joined() : values.dropLast().joined(separator: ", ") + " or " + values.last!
    }

    /// Validates one intent's fields; `line` names it in errors, or `problem` makes them (flags are
    /// named as flags: a usage error).
    public init(
        line: Int, symbol: String?, side: String?, qty: JSONScalar?, type: String?, limitPrice: JSONScalar?, tif: String?,
        clientOrderID: String?, newID: () -> String,
        problem: ((_ field: String, _ message: String) -> RaxxError)? = nil
    ) throws(RaxxError) {
        func bad(_ field: String, _ message: String) -> RaxxError { problem?(field, message) ?? RaxxError.badInput(line: line, field: field, message) }
        guard let symbol, !symbol.isEmpty else { throw bad("symbol", "is missing") }
        guard let instrument = InstrumentSymbol(parsing: symbol) else {
            throw bad("symbol", "'\(symbol)' is neither a ticker (AAPL) nor an OCC option symbol (AAPL261218C00190000)")
        }
        guard let side else { throw bad("side", "is missing") }
        guard let orderSide = OrderSide(rawValue: side) else { throw bad("side", "must be \(Self.choices(OrderSide.self)), not '\(side)'") }
        guard let qty else { throw bad("qty", "is missing") }
        let quantity: Int64
        switch qty {
        case .integer(let n): quantity = n
        default: throw bad("qty", "must be a whole number")
        }
        guard quantity > 0 else { throw bad("qty", "must be positive, not \(quantity)") }
        guard quantity <= Self.maximumQuantity else { throw bad("qty", "must be at most 1,000,000, not \(quantity)") }
        guard let orderType = type.map({ OrderType(rawValue: $0) }) ?? .market else {
            throw bad("type", "must be \(Self.choices(OrderType.self)), not '\(type ?? "")'")
        }
        var price: String? = nil
        if let limitPrice {
            switch limitPrice {
            case .string(let s): price = s
            case .integer(let n): price = String(n)
            case .number(let d): price = Decimal(d).description
            case .null: price = nil
            default: throw bad("limit_price", "must be a price such as 187.25")
            }
            if let p = price, Money.priceTicks(parsing: p) == nil {
                throw bad("limit_price", "must be a positive price with at most four decimals, not '\(p)'")
            }
        }
        if orderType == .limit && price == nil { throw bad("limit_price", "is required for a limit order") }
        if orderType == .market && price != nil { throw bad("limit_price", "does not go with a market order") }
        guard let timeInForce = tif.map({ TimeInForce(rawValue: $0) }) ?? .day else {
            throw bad("tif", "must be \(Self.choices(TimeInForce.self)), not '\(tif ?? "")'")
        }
        let id = clientOrderID ?? newID()
        guard (1...64).contains(id.count), id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._:-".contains($0)) }) else {
            throw bad("client_order_id", "must be 1 to 64 letters, digits or . _ : -")
        }
        self.line = line
        self.symbol = instrument.description
        self.side = orderSide
        self.qty = quantity
        self.type = orderType
        self.limitPrice = price
        self.tif = timeInForce
        self.clientOrderID = id
        self.idGenerated = clientOrderID == nil
    }

    /// Parses JSON Lines: the whole batch is validated before any order is sent, and every bad
    /// line is named, with its field, in one error.
    public static func parse(jsonLines text: String, newID: () -> String) throws(RaxxError) -> [OrderIntent] {
        var intents: [OrderIntent] = []
        var problems: [RaxxError] = []
        var seen: [String: Int] = [:]
        let decoder = JSONDecoder()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            do throws(RaxxError) {
                guard let object = try? decoder.decode([String: JSONScalar].self, from: Data(trimmed.utf8)) else {
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
                let intent = try OrderIntent(
                    line: line, symbol: try text("symbol"), side: try text("side"), qty: object["qty"],
                    type: try text("type"), limitPrice: object["limit_price"],
                    tif: try text("tif"), clientOrderID: try text("client_order_id"), newID: newID)
                if let earlier = seen[intent.clientOrderID] {
                    throw RaxxError.badInput(line: line, field: "client_order_id", "'\(intent.clientOrderID)' is already used on line \(earlier)")
                }
                seen[intent.clientOrderID] = line
                intents.append(intent)
            } catch {
                problems.append(error)
            }
        }
        if !problems.isEmpty { throw RaxxError.badInput(all: problems, then: "no order was sent") }
        guard !intents.isEmpty else { throw RaxxError.badInput("No orders on stdin: give one JSON object per line.") }
        return intents
    }

    /// The request as it goes on the wire (paper mode), refused by the server after `notAfter`.
    public func request(notAfter: Date) -> Components.Schemas.OrderRequest {
        .init(
            clientOrderId: clientOrderID, symbol: symbol, side: side, qty: qty, _type: type, limitPrice: limitPrice, tif: tif,
            notAfter: notAfter, mode: .paper)
    }

    /// That request's JSON, written as `JSONLines.line` writes it (compact, keys sorted, dates as
    /// RFC 3339): the one encoding of an order of a batch, journalled and sent as it is. The same
    /// bytes for every value validation lets through (JSONEncoder would write a backspace or form
    /// feed as `\b` or `\f`, `JSONEscaping` as `\u0008` or `\u000c`; neither gets this far).
    public func requestJSON(notAfter: Date) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(192)
        func key(_ name: StaticString) {
            out.append(out.isEmpty ? UInt8(ascii: "{") : UInt8(ascii: ","))
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out += [UInt8(ascii: "\""), UInt8(ascii: ":")]
        }
        func string(_ value: String) {
            var value = value
            out.append(UInt8(ascii: "\""))
            value.withUTF8 { JSONEscaping.append($0, to: &out) }
            out.append(UInt8(ascii: "\""))
        }
        key("client_order_id"); string(clientOrderID)
        if let limitPrice { key("limit_price"); string(limitPrice) }
        key("mode"); string(Components.Schemas.TradingMode.paper.rawValue)
        key("not_after"); out.append(UInt8(ascii: "\"")); RFC3339.append(notAfter, to: &out); out.append(UInt8(ascii: "\""))
        key("qty"); RFC3339.appendDigits(qty, to: &out)
        key("side"); string(side.rawValue)
        key("symbol"); string(symbol)
        key("tif"); string(tif.rawValue)
        key("type"); string(type.rawValue)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// What a step-up for this order is bound to (paper mode: the only one the tools send).
    public var action: OrderAction {
        OrderAction(
            clientOrderID: clientOrderID, symbol: symbol, side: side, qty: qty, type: type, limitPrice: limitPrice, tif: tif,
            mode: .paper)
    }
}

/// A JSON value that may stand in an order field.
public enum JSONScalar: Decodable, Sendable, Equatable {
    case string(String), integer(Int64), number(Double), bool(Bool), null

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let i = try? c.decode(Int64.self) {
            self = .integer(i)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else {
            self = .string(try c.decode(String.self))
        }
    }
}

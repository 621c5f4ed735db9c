import RaxxAPI

// The order vocabulary is the spec's: the generated enums, with what the tools and the sandbox
// ask of them in one place.

public typealias OrderSide = Components.Schemas.Side
public typealias OrderType = Components.Schemas.OrderType
public typealias TimeInForce = Components.Schemas.TimeInForce
public typealias OrderStatus = Components.Schemas.OrderStatus
public typealias TradingMode = Components.Schemas.TradingMode
/// What an alert is about.
public typealias AlertType = Components.Schemas.EventType

extension Components.Schemas.OrderStatus {
    /// Orders that may still fill: resting on the book, or not yet accepted.
    public static let working: [OrderStatus] = [.pending, .open, .partiallyFilled]
    /// Orders resting on the book, which a cancel can take off.
    public static let resting: [OrderStatus] = [.open, .partiallyFilled]

    /// The order can no longer change.
    public var isFinal: Bool { !Self.working.contains(self) }

    /// Orders that can no longer change.
    public static var final: [OrderStatus] { allCases.filter(\.isFinal) }

    /// The final statuses as an SQL list (`'filled', 'cancelled', …`), for queries over stored orders.
    public static var finalSQLList: String { final.map { "'\($0.rawValue)'" }.joined(separator: ", ") }
}

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

extension Components.Schemas.OrderStatus {
    /// The working statuses as an SQL list, for queries over stored orders.
    public static var workingSQLList: String { working.map { "'\($0.rawValue)'" }.joined(separator: ", ") }
    /// The resting statuses as an SQL list.
    public static var restingSQLList: String { resting.map { "'\($0.rawValue)'" }.joined(separator: ", ") }
}

/// The dead man's switch (`POST /api/orders/cancel-after`): its bounds, and why it cancelled an
/// order (the order's `reject_code`, the `order_cancelled` alert's `reason`). Shared by the
/// sandbox that fires it and the tools that arm it and report what it did.
public enum CancelAfter {
    /// The timeouts a switch arms with, in seconds (0 disarms).
    public static let timeoutRange = 5...600

    public enum Reason: String, Sendable, CaseIterable {
        /// No renewal came before the deadline.
        case connectionLost = "connection_lost"
        /// The session signed out.
        case signedOut = "signed_out"
        /// The session expired or was revoked.
        case sessionEnded = "session_ended"

        /// The alert's title.
        public var title: String {
            switch self {
            case .connectionLost: "Cancelled: switch not renewed in time"
            case .signedOut: "Cancelled: signed out"
            case .sessionEnded: "Cancelled: session ended"
            }
        }

        /// Why the server cancelled an order, as a person reads it after "cancelled …: ".
        public var why: String {
            switch self {
            case .connectionLost: "the dead man's switch fired because it was not renewed in time"
            case .signedOut: "the session signed out"
            case .sessionEnded: "the session ended"
            }
        }
    }

    /// The order was cancelled by a switch (its reject code says why).
    public static func cancelledBySwitch(status: OrderStatus, rejectCode: String?) -> Reason? {
        guard status == .cancelled, let code = rejectCode else { return nil }
        return Reason(rawValue: code)
    }
}

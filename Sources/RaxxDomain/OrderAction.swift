import Crypto
import Foundation
import RaxxCore
import RaxxWire

/// What a step-up for an order is bound to: the order's fields that matter, in canonical JSON,
/// hashed (SHA-256, base64url). The deadline is left out: a resubmission after a step-up carries
/// a fresh one. The client and the sandbox compute it from the same type.
public struct OrderAction: StepUpAction, Equatable {
    public var client_order_id: String
    public var symbol: String
    public var side: OrderSide
    public var qty: Int64
    public var type: OrderType
    public var limit_price: String?
    public var tif: TimeInForce
    public var mode: TradingMode

    public init(
        clientOrderID: String, symbol: String, side: OrderSide, qty: Int64, type: OrderType, limitPrice: String?,
        tif: TimeInForce, mode: TradingMode
    ) {
        client_order_id = clientOrderID
        self.symbol = symbol
        self.side = side
        self.qty = qty
        self.type = type
        limit_price = limitPrice
        self.tif = tif
        self.mode = mode
    }

    /// base64url(SHA-256(canonical JSON)): what the order's step-up grant is bound to.
    public var hash: String { actionHash }
}

import Crypto
import Foundation

/// What a step-up for an order is bound to: the order's fields that matter, in canonical JSON,
/// hashed (SHA-256, base64url). The deadline is left out: a resubmission after a step-up carries
/// a fresh one.
public struct OrderAction: Encodable, Sendable, Equatable {
    public var client_order_id: String
    public var symbol: String
    public var side: String
    public var qty: Int64
    public var type: String
    public var limit_price: String?
    public var tif: String
    public var mode: String

    public init(clientOrderID: String, symbol: String, side: String, qty: Int64, type: String, limitPrice: String?, tif: String, mode: String) {
        client_order_id = clientOrderID
        self.symbol = symbol
        self.side = side
        self.qty = qty
        self.type = type
        limit_price = limitPrice
        self.tif = tif
        self.mode = mode
    }

    /// base64url(SHA-256(canonical JSON)).
    public var hash: String {
        let data = (try? CanonicalJSON.data(self)) ?? Data()
        return Base64URL.encode(SHA256.hash(data: data))
    }
}

import Foundation
import RaxxWire

/// What a batch of orders says, for telling an accidental re-run (a shell's history, a retried
/// cron job) from a new batch. An order whose line gives its own client_order_id is safe to send
/// again: the server places an id once. An order without one gets a new id each run, so only its
/// content can tell that it was placed already: a batch with such lines is remembered by the
/// hash of every line (the ids given kept, the ones made here left out) in the order journal.
public struct BatchFingerprint: Sendable, Equatable {
    public let value: String

    /// The batch's fingerprint; nil when every line carries its own id.
    public init?(_ intents: [OrderIntent]) {
        guard intents.contains(where: \.idGenerated) else { return nil }
        struct Line: Encodable {
            var symbol: String, side: String, qty: Int64, type: String, limit_price: String?, tif: String, client_order_id: String?
        }
        value = CanonicalJSON.hash(
            intents.map {
                Line(
                    symbol: $0.symbol, side: $0.side.rawValue, qty: $0.qty, type: $0.type.rawValue, limit_price: $0.limitPrice,
                    tif: $0.tif.rawValue, client_order_id: $0.idGenerated ? nil : $0.clientOrderID)
            })
    }
}

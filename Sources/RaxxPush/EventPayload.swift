import Foundation
import RaxxAPI
import RaxxAPNs
import RaxxCore
import RaxxWire

/// An alert (the spec's Event) as an APNs payload: a title and body per alert type, a thread id
/// per type (so a device groups them), the event's seq and type. Never the email or account id —
/// the Event carries neither — and never more than APNs takes (the body is shortened to fit).
public enum EventPayload {
    public typealias Event = Components.Schemas.Event

    /// The thread id of an alert type: `raxx.fill_confirmed`, …
    public static func threadID(_ type: Components.Schemas.EventType) -> String { "raxx." + type.rawValue }

    /// The alert's title and body.
    public static func alert(_ event: Event) -> (title: String, body: String) {
        switch event._type {
        case .fillConfirmed:
            if let side = event.side, let qty = event.qty, let symbol = event.symbol, let price = event.price {
                return ("Order filled", "\(side == .buy ? "Bought" : "Sold") \(qty) \(symbol) at \(price)")
            }
            return ("Order filled", event.body ?? event.title)
        case .orderRejected:
            var what = ""
            if let side = event.side, let qty = event.qty, let symbol = event.symbol { what = "\(side.rawValue.capitalized) \(qty) \(symbol)" }
            let why = event.reason.map { "rejected: \($0)" } ?? "rejected"
            return ("Order rejected", what.isEmpty ? (event.body ?? event.title) : "\(what) \(why)")
        case .orderCancelled:
            // The dead man's switch: the title says why ("Cancelled: switch not renewed in time").
            var what = ""
            if let side = event.side, let qty = event.qty, let symbol = event.symbol { what = "\(side.rawValue.capitalized) \(qty) \(symbol) " }
            return ("Order cancelled", what.isEmpty ? event.title : what + event.title.prefix(1).lowercased() + event.title.dropFirst())
        case .sessionExpiring:
            if let end = event.expiresAt {
                return ("Session expiring", "Your session ends at \(RFC3339.string(from: end)). Sign in again to keep trading.")
            }
            return ("Session expiring", event.body ?? event.title)
        case .securityAlert:
            return ("Security alert", event.body ?? event.title)
        }
    }

    /// The payload's bytes: `{"aps":{"alert":{"body":…,"title":…},"thread-id":…},"seq":…,"type":…}`.
    public static func render(_ event: Event) -> [UInt8] {
        let (title, body) = alert(event)
        let whole = encode(title: title, body: body, event: event)
        if whole.count <= APNs.maxPayloadBytes { return whole }
        // The longest start of the body that fits with an ellipsis (escapes make bytes uneven).
        let characters = Array(body)
        var low = 0
        var high = characters.count
        while low < high {
            let middle = (low + high + 1) / 2
            if encode(title: title, body: String(characters[..<middle]) + "…", event: event).count <= APNs.maxPayloadBytes {
                low = middle
            } else {
                high = middle - 1
            }
        }
        return encode(title: title, body: String(characters[..<low]) + "…", event: event)
    }

    private static func encode(title: String, body: String, event: Event) -> [UInt8] {
        var out = "{\"aps\":{\"alert\":{\"body\":"
        JSONLineWriter.quote(body, into: &out)
        out += ",\"title\":"
        JSONLineWriter.quote(String(title.prefix(256)), into: &out)
        out += "},\"thread-id\":"
        JSONLineWriter.quote(threadID(event._type), into: &out)
        out += "},\"seq\":\(event.seq),\"type\":"
        JSONLineWriter.quote(event._type.rawValue, into: &out)
        out += "}"
        return Array(out.utf8)
    }
}

import Foundation
import RaxxAPI
import RaxxCore
import RaxxVault

/// Values the in-process command tests build their worlds from.
public enum Fixtures {
    /// A fixed "now": 2026-11-21T10:00:00Z.
    public static let now = Date(timeIntervalSince1970: 1_795_255_200)
    public static let email = "trader@example.com"
    /// The server a test world talks to by default (RAXX_API_URL unset: production).
    public static let origin = "https://api.raxx.app"
    public static let accountID = "acc-1"

    public static func account(mode: Components.Schemas.TradingMode = .paper, staff: Bool = false) -> Components.Schemas.Account {
        .init(id: accountID, email: email, mode: mode, staff: staff)
    }

    /// A session grant: a 15-minute access token in a 12-hour session.
    public static func grant(at now: Date = now, access: String = "access-1", renewal: String = "renewal-1") -> Components.Schemas.SessionGrant {
        .init(
            accessToken: access, tokenType: .bearer, expiresAt: now.addingTimeInterval(900), renewalToken: renewal,
            sessionExpiresAt: now.addingTimeInterval(12 * 3600), account: account())
    }

    /// The stored session of `grant`.
    public static func session(
        at now: Date = now, access: String = "access-1", renewal: String = "renewal-1",
        accessFor: TimeInterval = 900, sessionFor: TimeInterval = 12 * 3600
    ) -> StoredSession {
        StoredSession(
            email: email, accountID: accountID, accessToken: access, accessExpiresAt: now.addingTimeInterval(accessFor),
            renewalToken: renewal, sessionExpiresAt: now.addingTimeInterval(sessionFor), signedInAt: now.addingTimeInterval(-60))
    }

    /// A keystore holding a live session (and no passkey).
    public static func signedIn(at now: Date = now) -> MemoryKeystore {
        keystore(session: session(at: now))
    }

    /// A keystore holding `credential` and `session` for `origin` (the default server).
    public static func keystore(credential: StoredCredential? = nil, session: StoredSession? = nil, origin: String = origin) -> MemoryKeystore {
        MemoryKeystore(KeystoreContents(servers: [origin: ServerCredentials(credential: credential, session: session)]))
    }

    /// A problem+json answer.
    public static func problem(
        _ status: Int, code: String, title: String = "Refused.", detail: String? = nil,
        actionHash: String? = nil
    ) -> Components.Responses.Problem {
        .init(body: .applicationProblemJson(.init(title: title, status: status, detail: detail, code: code, actionHash: actionHash)))
    }

    /// The server's view of the session.
    public static func serverSession(at now: Date = now, mode: Components.Schemas.TradingMode = .paper) -> Components.Schemas.Session {
        .init(
            account: account(mode: mode), createdAt: now.addingTimeInterval(-60), expiresAt: now.addingTimeInterval(900),
            sessionExpiresAt: now.addingTimeInterval(12 * 3600))
    }

    /// An order as the server answers it.
    public static func order(
        id: String = "ord-1", clientOrderID: String = "c-1", symbol: String = "AAPL", side: Components.Schemas.Side = .buy,
        qty: Int64 = 10, type: Components.Schemas.OrderType = .market, limitPrice: String? = nil,
        status: Components.Schemas.OrderStatus = .filled, filled: Int64? = nil, at now: Date = now
    ) -> Components.Schemas.Order {
        .init(
            id: id, clientOrderId: clientOrderID, symbol: symbol, side: side, qty: qty, _type: type, limitPrice: limitPrice, tif: .day,
            status: status, filledQty: filled ?? (status == .filled ? qty : 0), avgFillPrice: status == .filled ? "187.25" : nil,
            mode: .paper, createdAt: now, updatedAt: now)
    }

    /// A portfolio snapshot.
    public static func portfolio(at now: Date = now) -> Components.Schemas.Portfolio {
        .init(
            accountId: accountID, asOf: now, mode: .paper, cash: "90000.00", marketValue: "10000.00", equity: "100000.00",
            buyingPower: "90000.00", unrealizedPnl: "125.50", positionsCount: 2,
            marks: [.init(symbol: "AAPL", price: "190.00"), .init(symbol: "AAPL261218C00190000", price: "4.25")])
    }

    /// One page of changes: two positions, a fill and its order, all new.
    public static func syncPage(at now: Date = now, cursor: Int64 = 4) -> Components.Schemas.SyncPage {
        .init(
            changes: [
                .init(
                    seq: 1, entity: .position, op: .upsert, id: "pos-1",
                    position: .init(id: "pos-1", symbol: "AAPL", qty: 10, avgPrice: "187.25", updatedAt: now)),
                .init(
                    seq: 2, entity: .position, op: .upsert, id: "pos-2",
                    position: .init(id: "pos-2", symbol: "AAPL261218C00190000", qty: 2, avgPrice: "3.50", updatedAt: now)),
                .init(
                    seq: 3, entity: .fill, op: .upsert, id: "fill-1",
                    fill: .init(id: "fill-1", orderId: "ord-1", symbol: "AAPL", side: .buy, qty: 10, price: "187.25", filledAt: now)),
                .init(seq: 4, entity: .order, op: .upsert, id: "ord-1", order: order(at: now)),
            ], cursor: cursor, hasMore: false, reset: false, asOf: now)
    }

    /// An alert of the feed.
    public static func alert(_ seq: Int64, _ type: Components.Schemas.EventType = .fillConfirmed, at now: Date = now) -> Components.Schemas.Event {
        .init(seq: seq, _type: type, createdAt: now.addingTimeInterval(Double(seq)), title: "Alert \(seq)", orderId: "ord-\(seq)")
    }

    /// A page of the feed.
    public static func alerts(
        _ seqs: [Int64], cursor: Int64? = nil, hasMore: Bool = false,
        type: Components.Schemas.EventType = .fillConfirmed
    ) -> Components.Schemas.EventPage {
        .init(events: seqs.map { alert($0, type) }, cursor: cursor ?? seqs.last ?? 0, hasMore: hasMore)
    }
}

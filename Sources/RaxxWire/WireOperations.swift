import RaxxAPI

/// An operation a fast path sends by hand (its body, or its answer, as bytes rather than
/// generated values): the generated operation's id, its path, and its query's names in the order
/// the generated client writes them.
public struct WireOperation: Sendable, Equatable {
    public let id: String
    public let path: String
    public let query: [String]
}

/// The one table of the paths the tools reach without the generated client. Every other request
/// goes through a generated operation. `WireOperationsTests` holds each entry to the request the
/// generated client makes for the same operation, so a path or a parameter renamed in the spec
/// fails there.
public enum WireOperations {
    /// `GET /api/sync`: a page of delta sync, read from its bytes (`SyncPageReader`).
    public static let getSyncChanges = WireOperation(
        id: Operations.GetSyncChanges.id, path: "/api/sync",
        query: ["cursor", "limit", "rebuild"])
    /// `POST /api/orders`: an order encoded once for the journal and the wire, its answer read
    /// from its bytes (`OrderAnswerReader`).
    public static let placeOrder = WireOperation(id: Operations.PlaceOrder.id, path: "/api/orders", query: [])
    /// `GET /api/portfolio`: the snapshot and its marks, one a position, read from its bytes
    /// (`PortfolioAnswerReader`).
    public static let getPortfolio = WireOperation(id: Operations.GetPortfolio.id, path: "/api/portfolio", query: [])

    public static let all = [getSyncChanges, placeOrder, getPortfolio]
}

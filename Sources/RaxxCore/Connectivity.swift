/// What the tools last saw of the network.
public enum Connectivity: String, Sendable, Codable, CaseIterable {
    case online
    /// No route: name resolution failed, connection refused, network unreachable.
    case offlineHard = "offline-hard"
    /// A route but no good answer: timeouts, resets, 502/503/504/429 from an unhealthy server.
    case offlineSoft = "offline-soft"
    case unknown

    public var isOffline: Bool { self == .offlineHard || self == .offlineSoft }

    var hint: String? {
        switch self {
        case .offlineHard: "The server could not be reached (no route, name not resolved or connection refused)."
        case .offlineSoft: "The server is reachable but not answering properly; it may be busy or down."
        case .online, .unknown: nil
        }
    }

    /// How an HTTP status from the server reads as connectivity: an unhealthy server is soft offline.
    public static func classify(httpStatus: Int) -> Connectivity {
        switch httpStatus {
        case 429, 502, 503, 504: .offlineSoft
        default: .online
        }
    }
}

/// Every subcommand declares whether it may touch the network.
public enum ConnectivityRequirement: String, Sendable, Codable {
    /// Reads the local state only; never opens a connection; behaves the same online and offline.
    case offlineCapable = "offline-capable"
    /// Talks to Raptor; fails fast offline with exit 69, sending and queueing nothing.
    case networkRequired = "network-required"
    /// Does its local part whatever the network, and tells the server when it can (sign-out).
    case networkOptional = "network-optional"

    /// One line for help texts and man pages.
    public var helpLine: String {
        switch self {
        case .offlineCapable: "Connectivity: offline-capable (never touches the network)."
        case .networkRequired: "Connectivity: network-required (offline it exits 69 and sends nothing)."
        case .networkOptional: "Connectivity: network-optional (works offline; tells the server when it can)."
        }
    }
}

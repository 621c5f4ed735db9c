import Foundation

/// The Raptor server a tool talks to: HTTPS anywhere, plain HTTP only to a loopback host.
public struct APIEndpoint: Sendable, Equatable, CustomStringConvertible {
    public static let production = APIEndpoint(validated: URL(string: "https://api.raxx.app")!)

    public let url: URL

    private init(validated url: URL) { self.url = url }

    /// Validates `text` as a server URL.
    public init(parsing text: String) throws(RaxxError) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              let host = url.host, !host.isEmpty
        else {
            throw RaxxError.usage("RAXX_API_URL is not a valid URL: \(text)", hint: "Use e.g. https://api.raxx.app")
        }
        switch scheme {
        case "https":
            break
        case "http":
            guard Self.isLoopback(host: host) else {
                throw RaxxError.usage(
                    "Refusing plain http to \(host): only loopback servers may use http.",
                    hint: "Use https, or a loopback address such as http://127.0.0.1:PORT."
                )
            }
        default:
            throw RaxxError.usage("RAXX_API_URL must use https (or http to a loopback host), not \(scheme).")
        }
        guard url.query == nil, url.fragment == nil, url.user == nil, url.password == nil else {
            throw RaxxError.usage("RAXX_API_URL must be a plain server address, without credentials, query or fragment.")
        }
        self.url = url
    }

    /// 127.0.0.0/8, ::1 and localhost.
    public static func isLoopback(host: String) -> Bool {
        let h = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let octets = h.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { o in UInt8(o) != nil }
    }

    public var description: String { url.absoluteString }
}

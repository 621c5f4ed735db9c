import Foundation

/// The Raptor server a tool talks to: HTTPS anywhere, plain HTTP only to a loopback host.
///
/// The address is normalised once, here: scheme and host lowercased, the scheme's default port
/// dropped. Everything downstream (the transport's proxy rule, the keystore's origins, the
/// per-server folders) sees only that form, so `HTTP://127.0.0.1` cannot slip past a rule that
/// reads `http://`.
public struct APIEndpoint: Sendable, Equatable, CustomStringConvertible {
    public static let production = APIEndpoint(url: URL(string: "https://api.raxx.app")!, scheme: "https", host: "api.raxx.app", port: nil)

    public let url: URL
    /// `https` or `http`, lowercased.
    public let scheme: String
    /// The host, lowercased (an IPv6 address without its brackets, as `URL.host` gives it).
    public let host: String
    /// The port, nil when it is the scheme's default.
    public let port: Int?

    private init(url: URL, scheme: String, host: String, port: Int?) {
        self.url = url
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// Validates `text` as a server URL. Its parts are read once, here; a text already in the
    /// normal form (the usual case) is parsed once in all (every start reads the configured server).
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
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = url.port.flatMap { $0 == (scheme == "https" ? 443 : 80) ? nil : $0 }
        let normalised = Self.origin(scheme: scheme, host: self.host, port: port) + url.path(percentEncoded: true)
        if normalised == text {
            self.url = url
        } else {
            guard let url = URL(string: normalised) else {
                throw RaxxError.usage("RAXX_API_URL is not a valid URL: \(text)", hint: "Use e.g. https://api.raxx.app")
            }
            self.url = url
        }
    }

    /// 127.0.0.0/8, ::1 and localhost.
    public static func isLoopback(host: String) -> Bool {
        let h = withoutBrackets(host.lowercased())
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let octets = h.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { o in UInt8(o) != nil }
    }

    public var description: String { url.absoluteString }

    // MARK: Per-server state

    /// The server's origin — scheme, host and port (omitted when it is the scheme's default) — by
    /// which the keystore keys sessions and passkeys and the cache and journal their folders: a
    /// token is only ever sent to the origin that issued it.
    public var origin: String { Self.origin(scheme: scheme, host: host, port: port) }

    private static func origin(scheme: String, host: String, port: Int?) -> String {
        // A byte search: String.contains(String) is Foundation's, through NSString, at every start.
        let host = host.utf8.contains(UInt8(ascii: ":")) && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port else { return "\(scheme)://\(host)" }
        return "\(scheme)://\(host):\(port)"
    }

    /// The origin as a folder name: `api.raxx.app`, `http_127.0.0.1_8080`. ASCII letters, digits,
    /// `.`, `_` and `-` stay; any other character is one `-`. An ASCII key is mapped byte by byte:
    /// Character's properties load Unicode's tables, a tenth of an offline read's own work.
    public var storageKey: String {
        var key = (scheme == "https" ? "" : scheme + "_") + host
        if let port { key += "_\(port)" }
        guard key.utf8.allSatisfy({ $0 < 0x80 }) else {
            // Outside ASCII, one "-" for each character, as the key has always been made.
            return String(key.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") ? $0 : "-" })
        }
        var out: [UInt8] = []
        out.reserveCapacity(key.utf8.count)
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "-"))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Passkeys

    /// The RP ID passkeys use with a loopback server.
    public static let loopbackRPID = "localhost"

    /// Whether a passkey may sign for `rpID` on this server: the RP ID must be the server's host or
    /// a registrable parent domain of it (api.raxx.app → raxx.app, never app or another site), and
    /// for a loopback server it is `localhost`. Whatever the server asks, nothing else is signed.
    public func permits(rpID: String) -> Bool {
        let id = rpID.lowercased()
        if Self.isLoopback(host: host) { return id == Self.loopbackRPID }
        guard !Self.isIPAddress(host), id.split(separator: ".").count >= 2, !id.hasPrefix("."), !id.hasSuffix(".") else { return false }
        return host == id || host.hasSuffix("." + id)
    }

    /// The origin a passkey's client data names for `rpID`: `https://` + the RP ID, whatever server
    /// asks (README and raxx.7 document this rule).
    public static func clientOrigin(rpID: String) -> String { "https://" + rpID.lowercased() }

    /// `text` without the brackets at either end (every start reads the configured server
    /// through here).
    static func withoutBrackets(_ text: String) -> String {
        text.trimmingASCII { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }
    }

    static func isIPAddress(_ host: String) -> Bool {
        let h = withoutBrackets(host)
        if h.utf8.contains(UInt8(ascii: ":")) { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}

extension String {
    /// The string without the ASCII bytes `isTrimmed` picks at either end. Foundation's
    /// `trimmingCharacters` goes through NSString, whose bridging scanned the whole suite's
    /// protocol conformances at start-up (about 1 ms of every command).
    public func trimmingASCII(_ isTrimmed: (UInt8) -> Bool) -> String {
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { !isTrimmed($0) }), let last = bytes.lastIndex(where: { !isTrimmed($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}

import CCurl
import Foundation
import RaxxCore

/// Setting libcurl options, for both of the suite's transports (`CurlTransport` for Raptor and
/// RaxxPush's HTTP/2 engine): every option must take, and the options every request carries are
/// set in one place.
public enum CurlOptions {
    /// Whether a request to `url` must not go through a proxy: plain http (which only ever goes to
    /// loopback, and would hand a proxy the bearer token in the clear), whatever the case of its
    /// scheme, and any loopback host. https elsewhere keeps honouring the proxy variables.
    public static func bypassesProxy(_ url: String) -> Bool {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased() else { return true }
        return scheme != "https" || APIEndpoint.isLoopback(host: parsed.host ?? "")
    }

    /// Throws the failure naming `what` when libcurl refuses an option: a request sent without its
    /// timeout or its protocol limit is not the request the transport promises.
    public static func check(_ result: CURLcode, _ what: String) throws {
        guard result == CURLE_OK else {
            throw TransportFailure(
                kind: .other, curlCode: Int(result.rawValue),
                detail: "libcurl refused \(what): \(String(cString: raxx_curl_easy_strerror(result)))")
        }
    }

    /// The options of every request: its URL and the protocols it may use, no redirects, no
    /// signals, the connect and total timeouts, the User-Agent and the error buffer.
    public static func setBaseline(
        _ handle: UnsafeMutableRawPointer, url: String, protocols: String, connectTimeout: RaxxDuration,
        totalTimeoutMilliseconds: Int, userAgent: String, errorBuffer: UnsafeMutableRawPointer?
    ) throws {
        try check(raxx_curl_set_string(handle, CURLOPT_URL, url), "the URL")
        try check(raxx_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, protocols), "the protocol limit")
        try check(raxx_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0), "no redirects")
        try check(raxx_curl_set_long(handle, CURLOPT_NOSIGNAL, 1), "no signals")
        try check(raxx_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(connectTimeout.milliseconds)), "the connect timeout")
        try check(raxx_curl_set_long(handle, CURLOPT_TIMEOUT_MS, totalTimeoutMilliseconds), "the total timeout")
        try check(raxx_curl_set_string(handle, CURLOPT_USERAGENT, userAgent), "the User-Agent")
        try check(raxx_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "the error buffer")
    }
}

/// One line as libcurl's header callback hands it over ("name: value\r\n"), read the same way by
/// both transports.
public enum CurlHeaderLine: Equatable, Sendable {
    /// A status line ("HTTP/1.1 200 OK", "HTTP/2 200"): the headers that follow are a new answer's
    /// (after an interim 1xx answer, or a redirect's), so those kept so far are dropped.
    case status
    /// A field: its name and value, the spaces, tabs and line ends around each trimmed.
    case field(name: String, value: String)
    /// Nothing to keep: the blank line that ends the headers, or a line without a colon.
    case other

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.init(bytes, keeping: nil)
    }

    /// The line, with only the fields named in `keeping` (lower case) read: any other is `.other`,
    /// found without making a string of it, and a kept one's name is given as `keeping` spells it.
    /// nil keeps every field. (A push answer's fields other than its apns-id were made into strings
    /// and kept for nothing: 1 % of a push.)
    public init(_ bytes: UnsafeRawBufferPointer, keeping names: [String]?) {
        // Byte by byte: the generic starts(with:) was a fifth of a push answer's header lines.
        if bytes.count >= 5, bytes[0] == UInt8(ascii: "H"), bytes[1] == UInt8(ascii: "T"), bytes[2] == UInt8(ascii: "T"),
            bytes[3] == UInt8(ascii: "P"), bytes[4] == UInt8(ascii: "/")
        {
            self = .status
            return
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            self = .other
            return
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        func trimmedRange(_ range: Range<Int>) -> Range<Int> {
            var (start, end) = (range.lowerBound, range.upperBound)
            while start < end && isSpace(bytes[start]) { start += 1 }
            while end > start && isSpace(bytes[end - 1]) { end -= 1 }
            return start..<end
        }
        func string(_ range: Range<Int>) -> String {
            guard !range.isEmpty, let base = bytes.baseAddress else { return "" }
            // As typed UTF-8 (decoding a raw slice went through the generic, slow path).
            return String(
                decoding: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self) + range.lowerBound, count: range.count),
                as: UTF8.self)
        }
        let nameRange = trimmedRange(bytes.startIndex..<colon)
        let name: String
        if let names {
            guard let kept = names.first(where: { Self.equalIgnoringASCIICase(bytes[nameRange], $0.utf8) }) else {
                self = .other
                return
            }
            name = kept
        } else {
            name = string(nameRange)
        }
        self = .field(name: name, value: string(trimmedRange((colon + 1)..<bytes.endIndex)))
    }

    private static func equalIgnoringASCIICase(_ bytes: Slice<UnsafeRawBufferPointer>, _ name: String.UTF8View) -> Bool {
        guard bytes.count == name.count else { return false }
        return zip(bytes, name).allSatisfy { a, b in
            a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z"))
        }
    }
}

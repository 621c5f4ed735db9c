import CCurl
import Foundation
import RaxxCore

/// Setting libcurl options, for both of the suite's transports (`CurlTransport` for Raptor and
/// RaxxPush's HTTP/2 engine): every option must take, and the options every request carries are
/// set in one place.
public enum CurlOptions {
    /// Throws the failure naming `what` when libcurl refuses an option: a request sent without its
    /// timeout or its protocol limit is not the request the transport promises.
    public static func check(_ result: CURLcode, _ what: String) throws {
        guard result == CURLE_OK else {
            throw TransportFailure(kind: .other, curlCode: Int(result.rawValue),
                                   detail: "libcurl refused \(what): \(String(cString: raxx_curl_easy_strerror(result)))")
        }
    }

    /// The options of every request: its URL and the protocols it may use, no redirects, no
    /// signals, the connect and total timeouts, the User-Agent and the error buffer.
    public static func setBaseline(_ handle: UnsafeMutableRawPointer, url: String, protocols: String, connectTimeout: RaxxDuration,
                                   totalTimeoutMilliseconds: Int, userAgent: String, errorBuffer: UnsafeMutableRawPointer?) throws {
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

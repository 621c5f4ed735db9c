import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The server's time as this process last saw it: the offset between the `Date` header of the
/// latest answer and the local clock. Order deadlines are judged by the server's clock, so they are
/// computed by it (a client whose clock is off would otherwise send orders already late, or give
/// up on ones still in flight). Until an answer is seen, the offset is zero.
public final class ServerClock: Sendable {
    private let state = Mutex(State())
    private let local: @Sendable () -> Date

    private struct State {
        var offset: TimeInterval = 0
        /// The last `Date` header read, and its time: the header changes once a second, and every
        /// answer carries it, so a batch of requests parses it once a second, not once per answer.
        var lastHeader: (text: String, time: Date)?
    }

    public init(local: @escaping @Sendable () -> Date = { Date() }) { self.local = local }

    /// Now, by the server's clock.
    public func now() -> Date { local().addingTimeInterval(state.withLock { $0.offset }) }

    /// How far the server's clock is ahead of this one (seconds; negative when behind).
    public var skew: TimeInterval { state.withLock { $0.offset } }

    /// Takes the server's time from an answer's `Date` header (whole seconds: the offset is good to
    /// about a second, which is what deadlines of seconds need).
    public func observe(dateHeader: String, receivedAt: Date) {
        let known = state.withLock { $0.lastHeader.flatMap { $0.text == dateHeader ? $0.time : nil } }
        guard let serverTime = known ?? Self.parseHTTPDate(dateHeader) else { return }
        // The header was written up to a second before the answer arrived; take the middle.
        let measured = serverTime.timeIntervalSince(receivedAt) + 0.5
        state.withLock { state in
            state.lastHeader = (dateHeader, serverTime)
            state.offset = abs(measured) < 1 ? 0 : measured
        }
    }

    /// IMF-fixdate (RFC 9110): `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func parseHTTPDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let year = Int(parts[3]) else { return nil }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let month = months.firstIndex(of: String(parts[2])) else { return nil }
        let clock = parts[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        var t = tm()
        t.tm_year = Int32(year - 1900)
        t.tm_mon = Int32(month)
        t.tm_mday = Int32(day)
        t.tm_hour = Int32(clock[0])
        t.tm_min = Int32(clock[1])
        t.tm_sec = Int32(clock[2])
        let seconds = timegm(&t)
        return seconds == -1 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}

/// Feeds every answer's `Date` header to a server clock.
public struct ServerClockMiddleware: ClientMiddleware {
    let clock: ServerClock
    let local: @Sendable () -> Date

    public init(clock: ServerClock, local: @escaping @Sendable () -> Date = { Date() }) {
        self.clock = clock
        self.local = local
    }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let answer = try await next(request, body, baseURL)
        if let date = answer.0.headerFields[.date] { clock.observe(dateHeader: date, receivedAt: local()) }
        return answer
    }
}

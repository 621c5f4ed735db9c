import Foundation
import RaxxAPNs
import RaxxCore
import RaxxWire

/// One line of the endpoint's log: an accepted push, or a refused one (marked so).
public struct PushLogEntry: Sendable {
    public enum Event: String, Sendable { case accepted, refused }

    public var event: Event
    public var status: Int
    public var reason: APNsReason?
    /// 410's timestamp (ms).
    public var timestamp: Int64?
    public var apnsID: String
    public var uniqueID: String?
    public var deviceToken: String?
    public var topic: String?
    public var pushType: String?
    public var priority: Int?
    public var expiration: Int64?
    public var collapseID: String?
    /// The payload's bytes: a JSON object (accepted pushes only).
    public var payload: [UInt8]?
    public var keyID: String?
    public var issuedAt: Int64?
    public var connection: Int
    public var stream: Int
    /// Server time, milliseconds since 1970.
    public var time: Int64

    /// The line, without its newline. Field order is fixed; absent values are null.
    public func jsonLine() -> String {
        var out = "{\"event\":\"\(event.rawValue)\",\"status\":\(status)"
        if event == .refused {
            out += ",\"reason\":" + Self.string(reason?.rawValue)
            if let timestamp { out += ",\"timestamp\":\(timestamp)" }
        }
        out += ",\"apns_id\":" + Self.string(apnsID)
        if event == .accepted { out += ",\"unique_id\":" + Self.string(uniqueID) }
        out += ",\"device_token\":" + Self.string(deviceToken)
        out += ",\"topic\":" + Self.string(topic)
        if event == .accepted {
            out += ",\"push_type\":" + Self.string(pushType)
            out += ",\"priority\":" + (priority.map(String.init) ?? "null")
            out += ",\"expiration\":" + (expiration.map(String.init) ?? "null")
            out += ",\"collapse_id\":" + Self.string(collapseID)
            out += ",\"payload\":" + Self.payloadJSON(payload)
        }
        out += ",\"kid\":" + Self.string(keyID)
        out += ",\"iat\":" + (issuedAt.map(String.init) ?? "null")
        out += ",\"connection\":\(connection),\"stream\":\(stream),\"time\":\"\(Self.rfc3339(milliseconds: time))\"}"
        return out
    }

    /// A payload on one line: its own bytes when they hold no line break (a line break can only be
    /// whitespace between a JSON text's tokens), otherwise re-serialized.
    static func payloadJSON(_ payload: [UInt8]?) -> String {
        guard let payload else { return "null" }
        if !payload.contains(10), !payload.contains(13) { return String(decoding: payload, as: UTF8.self) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])
        else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A JSON string literal, or null.
    static func string(_ value: String?) -> String {
        guard let value else { return "null" }
        var out = ""
        out.reserveCapacity(value.utf8.count + 2)
        JSONLineWriter.quote(value, into: &out)
        return out
    }

    /// `2025-01-31T12:00:00.123Z`.
    static func rfc3339(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(milliseconds % 1000))
    }
}

/// The log file: lines are appended to a buffer of at most `capacity` bytes, written out when it is
/// full, every `interval`, and on `close()`, so a test can read what was accepted soon after, and
/// everything once the endpoint stopped.
// @unchecked: holds a DispatchSourceTimer, and keeps NSLock held across write(2) so lines go out whole and in order.
public final class PushLog: @unchecked Sendable {
    private let fd: Int32
    private let capacity: Int
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private var closed = false
    private var timer: (any DispatchSourceTimer)?

    /// Opens (creating or appending to) `path`.
    public init(path: String, capacity: Int = 64 * 1024, interval: Double = 0.2) throws {
        // Device tokens are personal data: the log is 0600 whatever the umask, an old one narrowed.
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        if fd >= 0 { _ = fchmod(fd, 0o600) }
        guard fd >= 0 else {
            throw APNsEndpointConfiguration.FileError(path: path, message: "cannot open the log: " + String(cString: strerror(errno)))
        }
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.flush() }
        timer.resume()
        self.timer = timer
    }

    public func append(_ entry: PushLogEntry) {
        let line = entry.jsonLine()
        lock.withLock {
            guard !closed else { return }
            buffer.append(contentsOf: line.utf8)
            buffer.append(10)
            if buffer.count >= capacity { writeOut() }
        }
    }

    /// Writes out what is buffered.
    public func flush() {
        lock.withLock { writeOut() }
    }

    /// Writes out what is buffered and closes the file; later lines are dropped.
    public func close() {
        timer?.cancel()
        lock.withLock {
            guard !closed else { return }
            writeOut()
            closed = true
            _ = Glibc.close(fd)
        }
    }

    /// With the lock held.
    private func writeOut() {
        guard !buffer.isEmpty, !closed else { return }
        buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // a full disk loses log lines, never the endpoint
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    deinit { close() }
}

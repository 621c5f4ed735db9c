import Foundation

/// One JSON object written by hand, as `JSONLines.line` writes an `Encodable` one: compact, the
/// fields in the order given (callers give them sorted, as the encoder sorts them), a nil field
/// left out as synthesized `Codable` leaves it out, dates as RFC 3339. For the records the offline
/// reads print (`raxx-auth status`, `raxx-cache status`): in a process that lives a few
/// milliseconds, JSONEncoder's first use (its generic containers, instantiated by the runtime,
/// each checked by a scan of every conformance in the binary) costs more than the read itself.
/// Strings are escaped by `JSONEscaping`: the same text for anything but a control character
/// other than newline, return and tab, which both write in forms any JSON reader reads alike.
public struct JSONObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    public init() {
        bytes.reserveCapacity(256)
    }

    private mutating func key(_ name: StaticString) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    public mutating func add(_ name: StaticString, _ value: String?) {
        guard var value else { return }
        key(name)
        bytes.append(UInt8(ascii: "\""))
        value.withUTF8 { JSONEscaping.append($0, to: &bytes) }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func add(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    public mutating func add(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        RFC3339.appendDigits(value, to: &bytes)
    }

    public mutating func add(_ name: StaticString, _ value: Int?) {
        add(name, value.map(Int64.init))
    }

    public mutating func add(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        key(name)
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The object, closed, without a newline.
    public consuming func line() -> String {
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A record that writes its own JSON line (`JSONObjectWriter`), the same as its `Encodable`
/// conformance would: output paths prefer it, and a test holds the two to each other.
public protocol JSONLineWritable {
    func write(to json: inout JSONObjectWriter)
}

extension JSONLines {
    /// One line, without its newline, written by the record itself.
    public static func line<T: JSONLineWritable>(written value: T) -> String {
        var json = JSONObjectWriter()
        value.write(to: &json)
        return json.line()
    }
}

/// A record that writes its own JSON line (`JSONLineWriter`), the same as its `Encodable`
/// conformance would: output paths prefer it, and a test holds the two to each other. For the
/// records the offline reads print (`raxx-auth status`, `raxx-cache status`): in a process that
/// lives a few milliseconds, JSONEncoder's first use (its generic containers, instantiated by the
/// runtime, each checked by a scan of every conformance in the binary) costs more than the read.
public protocol JSONLineWritable {
    func write(to json: inout JSONLineWriter)
}

extension JSONLines {
    /// One line, without its newline, written by the record itself.
    public static func line<T: JSONLineWritable>(written value: T) -> String {
        var json = JSONLineWriter()
        value.write(to: &json)
        return json.object
    }
}

/// How a tool's words reach the argument parser.
///
/// The suite names no option with one dash except help's `-h` (and the parser's own `-help`):
/// every other option is `--long` (`Scripts/gen-man --check` holds every tool to that). So a word
/// of three or more characters that begins with one dash cannot be an option: it is a value. A
/// passkey's id is base64url, and one in sixty-four begins with "-". The parser would read such a
/// word as a cluster of one-letter flags. An unknown letter is a usage error. An "h" anywhere in
/// it asks for help, so `raxx-auth passkeys remove -k1h…` printed help, removed nothing and exited 0.
///
/// Such words go to the parser after the `--` terminator, where every word is a value. They keep
/// their order among themselves, and they come before any words that were already after a `--`
/// in the command line. A command takes one positional value, or a list whose order does not
/// matter, so moving them there changes nothing else.
public enum CommandLineWords {
    /// `arguments` (after the tool's name) as the parser should see them.
    public static func forParser(_ arguments: [String]) -> [String] {
        let terminator = arguments.firstIndex(of: "--") ?? arguments.endIndex
        let before = arguments[..<terminator]
        let values = before.filter(isValue)
        guard !values.isEmpty else { return arguments }
        let after = arguments[terminator...].dropFirst()
        return before.filter { !isValue($0) } + ["--"] + values + after
    }

    /// Whether `word`, before any `--`, is a value that begins with a dash.
    static func isValue(_ word: String) -> Bool {
        var bytes = word.utf8.makeIterator()
        guard bytes.next() == UInt8(ascii: "-"), let second = bytes.next(), second != UInt8(ascii: "-"), bytes.next() != nil else {
            return false
        }
        return !builtInOneDashNames.contains(word)
    }

    /// The parser's own names with one dash that are longer than a letter.
    static let builtInOneDashNames: Set<String> = ["-help"]
}

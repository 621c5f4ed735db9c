import Foundation
import RaxxCore
import RaxxWire

/// The one place errors are written: a person's sentence (and hint) on stderr, or with JSON
/// output one object `{"error":{"code":…,"message":…,"hint":…}}` on stderr.
public struct Reporter: Sendable {
    public var tool: String
    public var format: OutputFormat
    /// `--quiet`: the failures of `silentWhenQuiet` (offline, busy, rate-limited, stale) are not written.
    public var quiet: Bool

    public init(tool: String, format: OutputFormat, quiet: Bool = false) {
        self.tool = tool
        self.format = format
        self.quiet = quiet
    }

    /// The statuses that end a run silently with `--quiet`: those a retry a few minutes later
    /// settles by itself (a cron job run every five minutes does not mail each time the network is
    /// down), and data older than `--max-age`, which exit 3 and the JSON's `as_of` already tell.
    public static let silentWhenQuiet: Set<ExitStatus> = [.unavailable, .temporary, .stale]

    /// `{"error":{"code":…,"hint":…,"message":…}}`, written directly (JSONEncoder's generic
    /// machinery cost a signed-out `raxx-auth status --json` a tenth of its run).
    static func envelope(_ error: RaxxError) -> String {
        var body = JSONLineWriter()
        body.add("code", error.code)
        body.add("hint", error.hint)
        body.add("message", error.message)
        var json = JSONLineWriter()
        json.add("error", object: body.object)
        return json.line()
    }

    /// The most of a message or hint an error shows, in characters: an error may quote what it
    /// refused (a field's value, a server's answer), and that may be 30 MB of a file.
    public static let maxQuoted = 1_000

    /// `text` cut to `maxQuoted` characters, saying how much was left out.
    static func capped(_ text: String) -> String {
        guard text.utf8.count > maxQuoted, text.count > maxQuoted else { return text }
        let kept = text.prefix(maxQuoted)
        return kept + "… (\(text.count - kept.count) more characters)"
    }

    public func render(_ error: RaxxError) -> String {
        var error = error
        error.message = Self.capped(error.message)
        error.hint = error.hint.map(Self.capped)
        switch format {
        case .json:
            return Self.envelope(error)
        case .text:
            var text = "\(tool): \(TerminalText.printable(error.message, keepingNewlines: true))\n"
            if let hint = error.hint { text += "hint: \(TerminalText.printable(hint, keepingNewlines: true))\n" }
            return text
        }
    }

    /// Writes the error and answers the exit status to leave with.
    @discardableResult
    public func report(_ error: RaxxError, to io: CommandIO) -> ExitStatus {
        io.stdout.flush()
        guard !(quiet && Self.silentWhenQuiet.contains(error.status)) else { return error.status }
        io.stderr.write(render(error))
        io.stderr.flush()
        return error.status
    }
}

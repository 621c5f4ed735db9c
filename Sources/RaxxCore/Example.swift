/// One example of a tool's use: what it does, and the command line as it is typed in a shell.
/// Each tool's examples are shown by its `--help` and its man page (EXAMPLES), and the tests parse
/// every one with the tool's own parser (`expectExamplesHold`), so an example never shows a flag
/// that is gone.
public struct Example: Sendable, Equatable {
    public var what: String
    public var command: String

    public init(_ what: String, _ command: String) {
        self.what = what
        self.command = command
    }

    /// The marker between a discussion and its examples (Scripts/gen-man renders what follows it
    /// as the man page's EXAMPLES section).
    public static let heading = "EXAMPLES:"

    /// `text`, then `examples` under `heading`: a comment line and the command, each indented.
    public static func discussion(_ text: String, _ examples: [Example]) -> String {
        text + "\n\n" + heading + "\n" + examples.map { "  # \($0.what)\n  \($0.command)" }.joined(separator: "\n")
    }
}

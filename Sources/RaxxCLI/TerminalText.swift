/// Text a person's terminal shows: whatever a server, a file or a symbol carried, control
/// characters (escape sequences, carriage returns, backspaces, C1 controls) never reach it.
/// JSON output needs none of this: its encoder escapes them.
public enum TerminalText {
    /// `text` without control characters; new lines stay when `keepingNewlines` (messages), and
    /// tabs become spaces.
    public static func printable(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n" where keepingNewlines: out.append(scalar)
            case "\t": out.append(" ")
            case _ where scalar.properties.generalCategory == .control: continue
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}

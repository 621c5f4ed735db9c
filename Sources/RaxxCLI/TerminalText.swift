/// Text a person's terminal shows: whatever a server, a file or a symbol carried, control
/// characters (escape sequences, carriage returns, backspaces, C1 controls) never reach it.
/// JSON output needs none of this: its encoder escapes them.
public enum TerminalText {
    /// The columns `text` takes on a terminal: two for an emoji or an East Asian wide character,
    /// none for a character made only of marks and format characters, one for anything else
    /// (counted per character a person sees, so a flag or a family emoji counts once).
    public static func columns(_ text: String) -> Int {
        // Printable ASCII, nearly every cell: a column a byte.
        if text.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) { return text.utf8.count }
        return text.reduce(0) { $0 + columns(of: $1) }
    }

    static func columns(of character: Character) -> Int {
        var visible = false
        for scalar in character.unicodeScalars {
            let properties = scalar.properties
            if properties.isEmojiPresentation || scalar.value == 0xFE0F || isWide(scalar.value) { return 2 }
            switch properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format, .control: continue
            default: visible = true
            }
        }
        return visible ? 1 : 0
    }

    /// East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth W and F, in ranges).
    static func isWide(_ v: UInt32) -> Bool {
        (0x1100...0x115F).contains(v) || (0x2E80...0x303E).contains(v) || (0x3041...0x33FF).contains(v)
            || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v) || (0xA000...0xA4CF).contains(v)
            || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v)
            || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v)
    }

    /// `text` without control characters or bidirectional overrides, embeddings and isolates
    /// (U+202A to U+202E, U+2066 to U+2069: a server's string must not reorder what the terminal
    /// shows after it); new lines stay when `keepingNewlines` (messages), and tabs become spaces.
    public static func printable(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || isBidiControl($0) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n" where keepingNewlines: out.append(scalar)
            case "\t": out.append(" ")
            case _ where scalar.properties.generalCategory == .control || isBidiControl(scalar): continue
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }
}

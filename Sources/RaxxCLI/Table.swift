/// A plain text table for a terminal: a header row, columns padded to their widest cell,
/// numbers aligned right.
public struct Table: Sendable {
    public enum Alignment: Sendable { case left, right }

    public struct Column: Sendable {
        public var title: String
        public var alignment: Alignment
        public init(_ title: String, _ alignment: Alignment = .left) {
            self.title = title
            self.alignment = alignment
        }
    }

    public var columns: [Column]
    public var rows: [[String]]

    public init(columns: [Column], rows: [[String]] = []) {
        self.columns = columns
        self.rows = rows
    }

    /// The columns whose cells are statuses, coloured on a terminal.
    static let statusColumns: Set<String> = ["status", "result", "verdict", "valid", "outcome"]

    /// A status's colour (an SGR code): done well green, refused or lost red, under way yellow.
    static func colourCode(_ status: String) -> String? {
        switch status {
        case "filled", "placed", "delivered", "completed", "would_place", "already_placed", "yes", "online", "verified": "32"
        case "rejected", "failed", "unregistered", "cancelled", "refused", "would_reject", "expired", "no", "malformed",
             "closed", "offline": "31"
        case "open", "partially_filled", "pending", "not_sent", "unknown", "erasing", "planned", "identity_unverified", "received": "33"
        default: nil
        }
    }

    /// The table as text, one line per row, each ending in a newline; cells lose any control
    /// characters (a server's strings never move the terminal's cursor). With `colour`, statuses
    /// are coloured (the padding is not).
    public func render(colour: Bool = false) -> String {
        let coloured = colour ? Set(columns.indices.filter { Self.statusColumns.contains(columns[$0].title.lowercased()) }) : []
        let rows = self.rows.map { $0.map { TerminalText.printable($0) } }
        // Widths in terminal columns (an emoji or a CJK character takes two), each cell's counted once.
        let cellWidths = rows.map { $0.map(TerminalText.columns) }
        var widths = columns.map { TerminalText.columns($0.title) }
        for row in cellWidths {
            for (i, width) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], width) }
        }
        func line(_ cells: [String], _ cellWidths: [Int], header: Bool) -> String {
            var parts: [String] = []
            for (i, column) in columns.enumerated() {
                var cell = i < cells.count ? cells[i] : ""
                if !header, coloured.contains(i), let code = Self.colourCode(cell) { cell = "\u{1B}[\(code)m" + cell + "\u{1B}[0m" }
                let pad = String(repeating: " ", count: widths[i] - (i < cellWidths.count ? cellWidths[i] : 0))
                let isLast = i == columns.count - 1
                switch column.alignment {
                case .left: parts.append(isLast ? cell : cell + pad)
                case .right: parts.append(pad + cell)
                }
            }
            return parts.joined(separator: "  ") + "\n"
        }
        let titles = columns.map { $0.title.uppercased() }
        return line(titles, titles.map(TerminalText.columns), header: true)
            + zip(rows, cellWidths).map { line($0, $1, header: false) }.joined()
    }
}

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

    /// The table as text, one line per row, each ending in a newline; cells lose any control
    /// characters (a server's strings never move the terminal's cursor).
    public func render() -> String {
        let rows = self.rows.map { $0.map { TerminalText.printable($0) } }
        // Widths in terminal columns (an emoji or a CJK character takes two), each cell's counted once.
        let cellWidths = rows.map { $0.map(TerminalText.columns) }
        var widths = columns.map { TerminalText.columns($0.title) }
        for row in cellWidths {
            for (i, width) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], width) }
        }
        func line(_ cells: [String], _ cellWidths: [Int]) -> String {
            var parts: [String] = []
            for (i, column) in columns.enumerated() {
                let cell = i < cells.count ? cells[i] : ""
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
        return line(titles, titles.map(TerminalText.columns)) + zip(rows, cellWidths).map(line).joined()
    }
}

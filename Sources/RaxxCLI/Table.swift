import RaxxAPI

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

    /// How a status reads: done well, refused or lost, or under way.
    enum Tone {
        case done, refused, underWay
        /// Its colour, an SGR code: green, red, yellow.
        var code: String {
            switch self {
            case .done: "32"
            case .refused: "31"
            case .underWay: "33"
            }
        }
    }

    /// The tone of an order's status (every case decided here: a new one must be).
    static func tone(_ status: Components.Schemas.OrderStatus) -> Tone {
        switch status {
        case .filled: .done
        case .rejected, .cancelled, .expired: .refused
        case .pending, .open, .partiallyFilled: .underWay
        }
    }

    /// The tone of a data-subject request's status.
    static func tone(_ status: Components.Schemas.DSRStatus) -> Tone {
        switch status {
        case .verified, .completed: .done
        case .cancelled, .refused: .refused
        case .identityUnverified, .planned, .erasing: .underWay
        }
    }

    /// Every status word a table shows, with its tone: the spec's order and request statuses from
    /// their enums, and the words the tools' own results use.
    static let tones: [String: Tone] = {
        var tones: [String: Tone] = [:]
        for word in ["placed", "delivered", "would_place", "already_placed", "yes", "online"] { tones[word] = .done }
        for word in ["failed", "unregistered", "would_reject", "no", "malformed", "closed", "offline"] { tones[word] = .refused }
        for word in ["not_sent", "unknown", "received"] { tones[word] = .underWay }
        for status in Components.Schemas.OrderStatus.allCases { tones[status.rawValue] = tone(status) }
        for status in Components.Schemas.DSRStatus.allCases { tones[status.rawValue] = tone(status) }
        return tones
    }()

    /// A status's colour (an SGR code): done well green, refused or lost red, under way yellow.
    static func colourCode(_ status: String) -> String? { tones[status]?.code }

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

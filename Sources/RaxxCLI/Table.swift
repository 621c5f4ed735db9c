import RaxxAPI

/// A plain text table for a terminal: a header row, columns padded to their widest cell,
/// numbers aligned right.
public struct Table: Sendable {
    public enum Alignment: Sendable { case left, right }

    public struct Column: Sendable {
        public var title: String
        public var alignment: Alignment
        /// How much a person needs the column when the terminal is narrow: the least needed go
        /// first. By default the order of the columns is their order of importance (the last goes
        /// first); a table says otherwise where a later column matters more.
        public var importance: Int?
        /// Long values (identifiers, hashes) are shortened in the middle with an ellipsis when the
        /// table is too wide, before any column is dropped (on a terminal only: JSON keeps them whole).
        public var elidable: Bool
        public init(_ title: String, _ alignment: Alignment = .left, importance: Int? = nil, elidable: Bool = false) {
            self.title = title
            self.alignment = alignment
            self.importance = importance
            self.elidable = elidable
        }
    }

    /// The narrowest an elided value is cut to: enough of its start and end to tell it apart.
    static let elidedWidth = 13

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
    public func render(colour: Bool = false, width: Int? = nil) -> String {
        if let width { return fitted(to: width).render(colour: colour) }
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

    /// The widest line the table takes, in terminal columns.
    var width: Int {
        let titles = columns.map { TerminalText.columns($0.title) }
        let widths = columns.indices.map { i in
            rows.reduce(titles[i]) { max($0, i < $1.count ? TerminalText.columns(TerminalText.printable($1[i])) : 0) }
        }
        return widths.reduce(0, +) + 2 * max(columns.count - 1, 0)
    }

    /// The table within `width` terminal columns, as gh fits its tables: long values of elidable
    /// columns shortened in the middle first, then the least needed columns dropped, one at a
    /// time, until it fits (one column is always kept).
    public func fitted(to width: Int) -> Table {
        guard self.width > width else { return self }
        var elided = self
        elided.rows = rows.map { row in
            row.indices.map { i in
                guard i < columns.count, columns[i].elidable else { return row[i] }
                return Self.elided(row[i], to: max(Self.elidedWidth, TerminalText.columns(columns[i].title)))
            }
        }
        // The least needed first: by importance, then the later column.
        let order = columns.indices.sorted { a, b in
            let (x, y) = (columns[a].importance ?? -a, columns[b].importance ?? -b)
            return x != y ? x < y : a > b
        }
        var table = elided
        var dropped: Set<Int> = []
        for index in order where table.width > width && dropped.count < columns.count - 1 {
            dropped.insert(index)
            let kept = columns.indices.filter { !dropped.contains($0) }
            table.columns = kept.map { columns[$0] }
            table.rows = elided.rows.map { row in kept.map { k in k < row.count ? row[k] : "" } }
        }
        return table
    }

    /// `text` cut to `width` characters, its start and end kept around an ellipsis.
    static func elided(_ text: String, to width: Int) -> String {
        let characters = Array(TerminalText.printable(text))
        guard characters.count > width, width >= 3 else { return text }
        let head = (width - 1) / 2 + (width - 1) % 2, tail = (width - 1) / 2
        return String(characters.prefix(head)) + "…" + String(characters.suffix(tail))
    }
}

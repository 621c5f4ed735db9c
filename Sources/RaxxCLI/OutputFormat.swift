import ArgumentParser

/// How stdout is written: text tables for a person, JSON Lines for a pipe.
public enum OutputFormat: String, Sendable, CaseIterable, ExpressibleByArgument {
    case text
    case json

    // Spelled out (the argument parser's defaults build these through a key path, runtime lookups
    // paid at every start of every command, since every command takes --format).
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var allValueDescriptions: [String: String] { [:] }

    /// `--json` and `--format` force a format; otherwise a TTY gets text and anything else JSON Lines.
    public static func resolve(format: OutputFormat?, json: Bool, stdoutIsTTY: Bool) -> OutputFormat {
        if json { return .json }
        if let format { return format }
        return stdoutIsTTY ? .text : .json
    }
}

/// The options every Raxx subcommand takes.
public struct GlobalOptions: ParsableArguments, Sendable {
    @Option(
        name: .long, help: ArgumentHelp("Output format: text (tables) or json (JSON Lines). Default: text on a terminal, json otherwise.", valueName: "format"))
    public var format: OutputFormat?

    @Flag(name: .long, help: "Same as --format json.")
    public var json = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            """
            Print on stderr only what needs a person: no progress, no notes, and nothing when offline (exit 69), busy (exit 75) or older \
            than --max-age (exit 3). For cron.
            """
        ))
    public var quiet = false

    @Flag(name: .customLong("no-pager"), help: "Never page a long table on a terminal (see $PAGER).")
    public var noPager = false

    public init() {}

    public func resolvedFormat(stdoutIsTTY: Bool) -> OutputFormat {
        request.resolved(stdoutIsTTY: stdoutIsTTY)
    }

    /// What the options ask of the output.
    public var request: OutputRequest { OutputRequest(format: format, json: json, quiet: quiet, noPager: noPager) }
}

/// The output the global options ask for (`--format`, `--json`), as a plain value.
public struct OutputRequest: Sendable, Equatable {
    public var format: OutputFormat?
    public var json: Bool
    /// `--quiet`: stderr carries only what needs a person (see `CommandContext.quiet`).
    public var quiet: Bool
    /// `--no-pager`: a long table on a terminal is written as it is, not through `$PAGER`.
    public var noPager: Bool

    public init(format: OutputFormat? = nil, json: Bool = false, quiet: Bool = false, noPager: Bool = false) {
        self.noPager = noPager
        self.format = format
        self.json = json
        self.quiet = quiet
    }

    public func resolved(stdoutIsTTY: Bool) -> OutputFormat {
        OutputFormat.resolve(format: format, json: json, stdoutIsTTY: stdoutIsTTY)
    }

    /// How an error is written on stderr: one JSON object only when JSON output was asked for
    /// (`--json`, `--format json`) or `RAXX_ERRORS=json` is set; otherwise text for a person,
    /// whatever stdout is (under cron both are mail, and a person reads it).
    public func errorFormat(errorsAsJSON: Bool) -> OutputFormat {
        json || format == .json || errorsAsJSON ? .json : .text
    }
}

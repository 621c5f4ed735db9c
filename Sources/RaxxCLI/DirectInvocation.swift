import ArgumentParser

/// The offline reads people and scripts run most (`raxx-auth status`, `raxx-cache status`,
/// `raxx-cache show WHAT`), given nothing but the global options, are recognised without the
/// argument parser: building its command tree and argument sets (type-name reflection, mirrors,
/// a scan of the runtime's conformance tables per type asked about) cost several times what such a
/// read does. Only these exact shapes are recognised; anything else — help, versions, completions,
/// any other option, any mistake — goes to the parser, which answers as it always has.
public protocol DirectlyInvocable: AsyncParsableCommand {
    /// The command `arguments` (after the tool's name) stand for, built as the parser builds it,
    /// or nil to leave them to the parser.
    static func direct(_ arguments: ArraySlice<String>) -> (any AsyncParsableCommand)?
}

extension DirectlyInvocable {
    /// Whether this process's arguments are one of the shapes `direct` recognises (such a read
    /// waits on nothing, so its entrypoint runs it on the main thread).
    public static func answersDirectly() -> Bool {
        direct(CommandLine.arguments.dropFirst()) != nil
    }

    /// What `main()` does, with the recognised shapes run without parsing: the command runs, and
    /// an error it throws ends the process as `main()` ends it.
    public static func mainAnsweringDirectly() async {
        guard var command = direct(CommandLine.arguments.dropFirst()) else {
            await mainReportingUsage()
            return
        }
        do {
            try await command.run()
        } catch {
            exit(withError: error)
        }
    }
}

extension GlobalOptions {
    /// The global options when `arguments` are nothing else: none, `--json`, `--format F` or
    /// `--format=F` with F text or json; nil for anything else (the parser's to answer).
    public static func direct(_ arguments: ArraySlice<String>) -> GlobalOptions? {
        var options = GlobalOptions()
        options.format = nil
        options.json = false
        let a = Array(arguments)
        if a.isEmpty { return options }
        if a == ["--json"] {
            options.json = true
            return options
        }
        let value: String
        if a.count == 2, a[0] == "--format" {
            value = a[1]
        } else if a.count == 1, a[0].hasPrefix("--format=") {
            value = String(a[0].dropFirst("--format=".count))
        } else {
            return nil
        }
        guard let format = OutputFormat(rawValue: value) else { return nil }
        options.format = format
        return options
    }
}

import ArgumentParser
import RaxxCore

#if canImport(Glibc)
    import Glibc
#endif

/// The offline reads people and scripts run most (`raxx-auth status`, `raxx-cache status`,
/// `raxx-cache show WHAT`), given nothing but the global options, are recognised without the
/// argument parser: building its command tree and argument sets (type-name reflection, mirrors,
/// a scan of the runtime's conformance tables per type asked about) cost several times what such a
/// read does. Only these exact shapes are recognised; anything else — help, versions, completions,
/// any other option, any mistake — goes to the parser, which answers as it always has.
public protocol DirectlyInvocable: AsyncParsableCommand {
    /// What `arguments` (after the tool's name) ask for, run as the parser's command would run,
    /// or nil to leave them to the parser.
    static func direct(_ arguments: ArraySlice<String>) -> DirectCommand?
}

/// A command recognised without the parser: its live run and its logic. A verb whose logic needs
/// none of its parsed options gives its logic alone, so that not even its options' property
/// wrappers are built (each is a generic type the runtime instantiates, checking its requirements
/// through the same conformance scans).
public struct DirectCommand {
    public let live: LiveRun
    /// The verb it stands for.
    public let command: any RaxxCommand.Type
    /// The verb's value as the parser would have built it, when its logic needs its options.
    public let parsed: (any RaxxCommand)?
    public let body: (CommandContext) async throws -> Void

    /// `Command` with `output`, its logic needing none of the parsed options.
    public init<Command: RaxxCommand>(
        _ command: Command.Type, output: OutputRequest,
        body: @escaping (CommandContext) async throws -> Void
    ) {
        live = LiveRun(tool: Command.tool, requirement: Command.connectivity, output: output, services: Command.liveServices)
        self.command = command
        parsed = nil
        self.body = body
    }

    /// `command`, built as the parser would have built it (its `global` too).
    public init<Command: RaxxCommand>(_ command: Command) {
        live = LiveRun(
            tool: Command.tool, requirement: command.requirement, output: command.global.request,
            services: Command.liveServices)
        self.command = Command.self
        parsed = command
        body = { context in try await command.run(context) }
    }
}

extension DirectlyInvocable {
    /// Whether this process's arguments are one of the shapes `direct` recognises (such a read
    /// waits on nothing, so its entrypoint runs it on the main thread).
    public static func answersDirectly() -> Bool {
        direct(CommandLine.arguments.dropFirst()) != nil
    }

    /// What `main()` does, with the recognised shapes run without parsing: the command runs, and
    /// the process ends with its status as `main()` ends it.
    public static func mainAnsweringDirectly() async {
        guard let command = direct(CommandLine.arguments.dropFirst()) else {
            await mainReportingUsage()
            return
        }
        let status = await command.live.status(command.body)
        if status != .ok { Glibc.exit(status.rawValue) }
    }
}

extension GlobalOptions {
    /// The global options when `arguments` are nothing else: none, `--json`, `--format F` or
    /// `--format=F` with F text or json; nil for anything else (the parser's to answer).
    public static func direct(_ arguments: ArraySlice<String>) -> OutputRequest? {
        var a = arguments
        guard let first = a.popFirst() else { return OutputRequest() }
        if first == "--json", a.isEmpty { return OutputRequest(json: true) }
        let value: Substring
        if first == "--format", let next = a.popFirst(), a.isEmpty {
            value = Substring(next)
        } else if first.hasPrefix("--format="), a.isEmpty {
            value = first.dropFirst("--format=".count)
        } else {
            return nil
        }
        guard let format = OutputFormat(rawValue: String(value)) else { return nil }
        return OutputRequest(format: format)
    }

    /// The options `request` stands for, as the parser would have set them.
    public init(_ request: OutputRequest) {
        self.init()
        format = request.format
        json = request.json
        quiet = request.quiet
        noPager = request.noPager
    }
}

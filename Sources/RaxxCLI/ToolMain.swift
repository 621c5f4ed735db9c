import ArgumentParser
import Foundation
import RaxxCore

#if canImport(Glibc)
import Glibc
#endif

extension AsyncParsableCommand {
    /// What `main()` does, but a usage error (an unknown option, a value out of its set, a bad
    /// duration) is reported as every other error is: with JSON output (`--json`, `--format json`,
    /// or standard output not a terminal) one `{"error":{"code":"usage",…}}` object on stderr; on
    /// a terminal or with `--format text`, the parser's own message and usage, as before. Exit 64
    /// either way; help and completions are untouched. A word that begins with one dash but is no
    /// option is a value (`CommandLineWords`).
    public static func mainReportingUsage(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) async {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(CommandLineWords.forParser(arguments))
        } catch {
            if exitCode(for: error) == .validationFailure && UsageErrors.wantJSON(arguments, stdoutIsTTY: isatty(1) == 1) {
                let usage = RaxxError.usage(message(for: error), hint: UsageErrors.hint(fullMessage(for: error)))
                let status = Reporter(tool: _commandName, format: .json).report(usage, to: .standard())
                Glibc.exit(status.rawValue)
            }
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// How a usage error is reported.
enum UsageErrors {
    /// Whether the output is JSON by the global options among `arguments` (the last one given
    /// wins, as in the parser), or else by whether standard output is a terminal.
    static func wantJSON(_ arguments: [String], stdoutIsTTY: Bool) -> Bool {
        var format: OutputFormat? = nil
        var json = false
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument == "--json" {
                json = true
            } else if argument == "--format", index + 1 < arguments.endIndex {
                format = OutputFormat(rawValue: arguments[index + 1]) ?? format
                index += 1
            } else if argument.hasPrefix("--format=") {
                format = OutputFormat(rawValue: String(argument.dropFirst("--format=".count))) ?? format
            }
            index += 1
        }
        return OutputFormat.resolve(format: format, json: json, stdoutIsTTY: stdoutIsTTY) == .json
    }

    /// The parser's pointer to help ("See 'raxx-cache show --help' for more information."), as a hint.
    static func hint(_ fullMessage: String) -> String? {
        fullMessage.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.last { $0.hasPrefix("See '") }
    }
}

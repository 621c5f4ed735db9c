import ArgumentParser
import Foundation
import RaxxCore

#if canImport(Glibc)
    import Glibc
#endif

extension AsyncParsableCommand {
    /// What `main()` does, but a usage error (an unknown option, a value out of its set, a bad
    /// duration) is reported as every other error is: with JSON asked for (`--json`, `--format
    /// json`, `RAXX_ERRORS=json`) one `{"error":{"code":"usage",…}}` object on stderr; otherwise
    /// the parser's own message and usage. Exit 64
    /// either way; help and completions are untouched. A word that begins with one dash but is no
    /// option is a value (`CommandLineWords`).
    public static func mainReportingUsage(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) async {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(CommandLineWords.forParser(arguments))
        } catch {
            // A mistyped verb, as gh answers one: what it may have meant.
            if exitCode(for: error) == .validationFailure, let typo = UsageErrors.mistypedVerb(arguments, root: Self.self) {
                let usage = RaxxError.usage(
                    "Unknown command '\(typo.word)' for '\(typo.path)'.",
                    hint: "Did you mean '\(typo.suggestion)'? See '\(typo.path) --help'.")
                let status = Reporter(tool: _commandName, format: UsageErrors.wantJSON(arguments) ? .json : .text).report(usage, to: .standard())
                Glibc.exit(status.rawValue)
            }
            exitShowingHelp(for: error)
            if exitCode(for: error) == .validationFailure && UsageErrors.wantJSON(arguments) {
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
            exitShowingHelp(for: error)  // --help and `help VERB` come as a command whose run throws the request
            exit(withError: error)
        }
    }

    /// When `error` is a request for help: the help, laid out as gh's (`HelpLayout`), and exit 0.
    /// (The version, the completion scripts and every other error are left to the parser.)
    static func exitShowingHelp(for error: any Error) {
        guard exitCode(for: error) == .success,
            let help = HelpLayout.help(fullMessage(for: error), examples: (Self.self as? any HasExamples.Type)?.examples ?? [])
        else { return }
        let io = CommandIO.standard()
        io.stdout.write(help)
        io.stdout.flush()
        Glibc.exit(0)
    }
}

/// How a usage error is reported.
enum UsageErrors {
    /// Whether errors are JSON: asked for by the global options among `arguments` (the last
    /// `--format` given wins, as in the parser) or by `RAXX_ERRORS=json`; text for a person
    /// otherwise, whatever standard output is (`OutputRequest.errorFormat`).
    static func wantJSON(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
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
        return OutputRequest(format: format, json: json).errorFormat(errorsAsJSON: environment["RAXX_ERRORS"] == "json") == .json
    }

    /// A word where a verb goes that is no verb of the command it follows but is close to one
    /// (a letter or two off, or two letters swapped): the word, the command (as typed, from the
    /// tool's name), and the verb it is closest to. Nil when the word is far from every verb.
    static func mistypedVerb(_ arguments: [String], root: any ParsableCommand.Type) -> (word: String, path: String, suggestion: String)? {
        var verbs = Verbs(root)
        var path = verbs.name
        for word in arguments {
            if word.hasPrefix("-") { return nil }  // options come after the verbs they belong to
            guard !verbs.children.isEmpty else { return nil }
            if let next = verbs.children.first(where: { $0.names.contains(word) }) {
                verbs = next
                path += " " + word
                continue
            }
            let scored = (verbs.children.map(\.name) + ["help"]).map { (name: $0, distance: editDistance(word.lowercased(), $0)) }
            guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= max(1, min(2, best.name.count / 3)) else {
                return nil
            }
            return (word, path, best.name)
        }
        return nil
    }

    /// A command's names and its verbs, read once through its concrete type.
    struct Verbs {
        var name: String
        var names: [String]
        var subcommands: [any ParsableCommand.Type]
        var children: [Verbs] { subcommands.map { Verbs($0) } }

        init(_ command: any ParsableCommand.Type) {
            func read<C: ParsableCommand>(_ type: C.Type) -> (String, [String], [any ParsableCommand.Type]) {
                (C._commandName, C.configuration.aliases, C.configuration.subcommands)
            }
            let (name, aliases, subcommands) = read(command)
            self.name = name
            names = [name] + aliases
            self.subcommands = subcommands
        }
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
    /// neighbours each cost one.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var d = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    /// The parser's pointer to help ("See 'raxx-cache show --help' for more information."), as a hint.
    static func hint(_ fullMessage: String) -> String? {
        fullMessage.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.last { $0.hasPrefix("See '") }
    }
}

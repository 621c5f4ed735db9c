/// A tool whose `--help` and man page show examples (each parsed by the tests).
public protocol HasExamples {
    static var examples: [Example] { get }
}

/// `--help` as gh lays it out: USAGE, the one-line summary (and whether the command needs the
/// network), the arguments, options and verbs, EXAMPLES, and where to learn more. The prose of a
/// command's discussion is the man page's (Scripts/gen-man renders it from the same command tree);
/// help keeps to what a person scans for.
public enum HelpLayout {
    /// The argument parser's message for `--help` or `help VERB` (its full message for the request)
    /// laid out again; nil for any other message (a version, a completion script, an error).
    public static func help(_ message: String, examples: [Example]) -> String? {
        guard message.hasPrefix("OVERVIEW:") || message.hasPrefix("USAGE:") else { return nil }
        return arranged(message, examples: examples)
    }

    /// `help` (the argument parser's, already wrapped to the terminal) laid out again, with those
    /// of `examples` that run the command it is for.
    public static func arranged(_ help: String, examples: [Example]) -> String {
        var sections: [(title: String, lines: [String])] = []
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let title = heading(line) {
                let rest = line.dropFirst(title.count + 1).drop { $0 == " " }
                sections.append((title, rest.isEmpty ? [] : [String(rest)]))
            } else if sections.isEmpty {
                sections.append(("", [line]))
            } else {
                sections[sections.count - 1].lines.append(line)
            }
        }
        func section(_ title: String) -> [String]? { sections.first { $0.title == title }?.lines }
        func trimmed(_ lines: [String]) -> [String] {
            var lines = lines
            while lines.last?.allSatisfy(\.isWhitespace) == true { lines.removeLast() }
            while lines.first?.allSatisfy(\.isWhitespace) == true { lines.removeFirst() }
            return lines
        }
        guard let usage = section("USAGE") else { return help }

        // The overview: its first paragraph is the summary; of the rest, only the connectivity.
        let overview = section("OVERVIEW") ?? []
        let summary = overview.prefix { !$0.allSatisfy(\.isWhitespace) }.joined(separator: " ")
        let discussion = overview.dropFirst(overview.prefix { !$0.allSatisfy(\.isWhitespace) }.count).joined(separator: " ")
        let connectivity = discussion.range(of: "Connectivity: ").map { String(discussion[$0.lowerBound...]) }
            .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }

        // The command as typed (`raxx-order place`), from the usage line.
        let words = (usage.first ?? "").split(separator: " ").prefix { !$0.hasPrefix("<") && !$0.hasPrefix("[") && !$0.hasPrefix("-") }
        let command = words.joined(separator: " ")
        let tool = words.first.map(String.init) ?? command
        let shown = words.count <= 1 ? examples : examples.filter { $0.command.hasPrefix(command + " ") || $0.command == command }

        var out: [String] = ["USAGE: " + (usage.first ?? "")] + usage.dropFirst()
        out = trimmed(out)
        out.append("")
        if !summary.isEmpty { out.append(summary) }
        if let connectivity { out.append(connectivity) }
        var hasVerbs = false
        for (title, lines) in sections where !["", "OVERVIEW", "USAGE", String(Example.heading.dropLast())].contains(title) {
            var body = lines
            if title == "SUBCOMMANDS" {
                hasVerbs = true
                body.removeAll { $0.hasPrefix("  See '") }  // said under LEARN MORE
            }
            out.append("")
            out.append(title + ":")
            out += trimmed(body)
        }
        if !shown.isEmpty {
            out.append("")
            out.append(Example.heading)
            for example in shown { out += ["  # " + example.what, "  " + example.command] }
        }
        var more = [("man " + tool, "every verb in full"), ("man raxx", "the conventions: output, errors, exit statuses, environment")]
        if hasVerbs { more.append((command + " <subcommand> --help", "a verb's options")) }
        let width = more.map(\.0.count).max() ?? 0
        out += ["", "LEARN MORE:"] + more.map { "  " + $0.0 + String(repeating: " ", count: width - $0.0.count + 2) + $0.1 }
        return out.joined(separator: "\n") + "\n"
    }

    /// `OPTIONS` for a line `OPTIONS:` or `USAGE: …`; nil for any other line.
    static func heading(_ line: String) -> String? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let title = line[..<colon]
        guard !title.isEmpty, title.allSatisfy({ $0.isUppercase || $0 == " " }), title.first?.isLetter == true else { return nil }
        let after = line[line.index(after: colon)...]
        guard after.isEmpty || after.first == " " else { return nil }
        return String(title)
    }
}

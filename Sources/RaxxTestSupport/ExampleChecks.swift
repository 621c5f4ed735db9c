import ArgumentParser
import RaxxCLI
import RaxxCore
import Testing

/// A tool's examples (`Example`, shown by --help and the man page) hold: each runs this tool,
/// parses with its own parser (the flags exist, the values are valid), and shows in --help as
/// written.
public func expectExamplesHold<Root: ParsableCommand>(
    _ root: Root.Type, tool: String, _ examples: [Example],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(examples.count >= 5, "\(tool) shows too few examples", sourceLocation: sourceLocation)
    let help = Root.helpMessage(columns: 200)
    for example in examples {
        #expect(example.command.hasPrefix(tool + " "), "\(example.command)", sourceLocation: sourceLocation)
        do {
            _ = try Root.parseAsRoot(CommandLineWords.forParser(example.arguments))
        } catch {
            Issue.record("\(example.command) does not parse: \(Root.message(for: error))", sourceLocation: sourceLocation)
        }
        #expect(
            help.contains("  # \(example.what)\n  \(example.command)\n") || help.hasSuffix("  # \(example.what)\n  \(example.command)"),
            "--help does not show \(example.command)", sourceLocation: sourceLocation)
    }
}

extension Example {
    /// The arguments the tool itself receives: the words of the command's first stage (before a
    /// pipe or a redirection), after the tool's name, with quotes removed.
    var arguments: [String] {
        var words: [String] = [], word = "", quote: Character? = nil, inWord = false
        for c in command {
            if let q = quote {
                if c == q { quote = nil } else { word.append(c) }
                continue
            }
            switch c {
            case "'", "\"": quote = c; inWord = true
            case " ":
                if inWord { words.append(word); word = ""; inWord = false }
            case "|", "<", ">", ";":
                if inWord { words.append(word) }
                return Array(words.dropFirst())
            default: word.append(c); inWord = true
            }
        }
        if inWord { words.append(word) }
        return Array(words.dropFirst())
    }
}

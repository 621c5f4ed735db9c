import ArgumentParser

/// Every command names itself in its configuration (`commandName:`): a command without one is named
/// by the argument parser from its type, through `String(describing:)`, which costs a scan of the
/// Swift runtime's conformance tables per command at every start — a quarter of what an offline
/// read such as `raxx-cache status` cost before this. Tests check each tool's tree with this.
public enum CommandNames {
    /// The tree under `root` as command lines ("raxx-cache show"), depth first in declaration
    /// order; a command without an explicit name appears as `<unnamed TypeName>`.
    public static func paths(_ root: any ParsableCommand.Type) -> [String] {
        var out: [String] = []
        func walk(_ command: any ParsableCommand.Type, _ prefix: String) {
            let name = command.configuration.commandName ?? "<unnamed \(command)>"
            let path = prefix.isEmpty ? name : prefix + " " + name
            out.append(path)
            for sub in command.configuration.subcommands { walk(sub, path) }
        }
        walk(root, "")
        return out
    }
}

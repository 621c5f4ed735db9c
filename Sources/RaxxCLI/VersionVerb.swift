import ArgumentParser
import RaxxCore
import RaxxWire

/// `TOOL version`: what `--version` says, "raxx-order 0.1.0 (1a2b3c4, 2026-12-02)", as text on a
/// terminal, and into a pipe as one JSON object (`commit`, `date`, `tool`, `version`).
public protocol VersionVerb: RaxxCommand {}

extension VersionVerb {
    public static var connectivity: ConnectivityRequirement { .offlineCapable }

    public static var versionConfiguration: CommandConfiguration {
        CommandConfiguration(
            commandName: "version", abstract: "Show the version, and the commit it was built from with its date.",
            discussion: "The same as --version. " + ConnectivityRequirement.offlineCapable.helpLine)
    }

    public func run(_ context: CommandContext) async throws {
        switch context.format {
        case .text:
            context.io.stdout.write(RaxxVersion.line(tool: Self.tool) + "\n")
        case .json:
            var w = JSONLineWriter()
            w.add("commit", RaxxVersion.commit); w.add("date", RaxxVersion.commitDay); w.add("tool", Self.tool)
            w.add("version", RaxxVersion.current)
            context.io.stdout.write(w.line())
        }
        context.io.stdout.flush()
    }
}

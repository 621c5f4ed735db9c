import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What every tool's `main` does: `--version` alone is answered at once, before the argument parser
/// and the concurrency runtime start (a version check in a script or a health probe costs what
/// printing a line costs); anything else runs the command, asynchronously, and exits with its status.
public enum Entrypoint {
    public static func run(_ main: @escaping @Sendable () async -> Void) -> Never {
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.count == 1, arguments.first == "--version" {
            let line = RaxxVersion.current + "\n"
            _ = line.withCString { write(1, $0, strlen($0)) }
            exit(0)
        }
        Task {
            await main()
            exit(0)
        }
        dispatchMain()
    }
}

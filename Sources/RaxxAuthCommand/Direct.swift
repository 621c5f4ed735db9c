import ArgumentParser
import RaxxCLI

extension RaxxAuth: DirectlyInvocable {
    /// `status` with only the global options (see DirectlyInvocable).
    public static func direct(_ arguments: ArraySlice<String>) -> DirectCommand? {
        guard arguments.first == "status", let output = GlobalOptions.direct(arguments.dropFirst()) else { return nil }
        return DirectCommand(Status.self, output: output, body: Status.report)
    }
}

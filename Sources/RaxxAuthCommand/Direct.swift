import ArgumentParser
import RaxxCLI

extension RaxxAuth: DirectlyInvocable {
    /// `status` with only the global options (see DirectlyInvocable).
    public static func direct(_ arguments: ArraySlice<String>) -> (any AsyncParsableCommand)? {
        guard arguments.first == "status", let global = GlobalOptions.direct(arguments.dropFirst()) else { return nil }
        var status = Status()
        status.global = global
        return status
    }
}

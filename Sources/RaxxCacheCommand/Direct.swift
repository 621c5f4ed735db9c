import ArgumentParser
import RaxxCLI

extension RaxxCache: DirectlyInvocable {
    /// `status` and `show WHAT`, each with only the global options (see DirectlyInvocable).
    public static func direct(_ arguments: ArraySlice<String>) -> DirectCommand? {
        switch arguments.first {
        case "status"?:
            guard let output = GlobalOptions.direct(arguments.dropFirst()) else { return nil }
            return DirectCommand(Status.self, output: output, body: Status.report)
        case "show"?:
            let rest = arguments.dropFirst()
            guard let first = rest.first, let what = Show.What(rawValue: first),
                let output = GlobalOptions.direct(rest.dropFirst())
            else { return nil }
            // Only WHAT and the global options: nothing for `validate` to refuse, and no parsed
            // value needed (building Show's property wrappers cost about 0.8 ms of a 10 ms read).
            return DirectCommand(Show.self, output: output) { context in try await Show.read(Show.Reading(what: what), context) }
        default:
            return nil
        }
    }
}

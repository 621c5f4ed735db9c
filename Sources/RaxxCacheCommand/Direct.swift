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
                  let output = GlobalOptions.direct(rest.dropFirst()) else { return nil }
            var show = Show()
            show.what = what
            show.symbol = nil
            show.since = nil
            show.status = nil
            show.limit = nil
            show.maxAge = nil
            show.global = GlobalOptions(output)
            guard (try? show.validate()) != nil else { return nil }
            return DirectCommand(show)
        default:
            return nil
        }
    }
}

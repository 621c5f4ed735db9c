import ArgumentParser
import RaxxCLI

extension RaxxCache: DirectlyInvocable {
    /// `status` and `show WHAT`, each with only the global options (see DirectlyInvocable).
    public static func direct(_ arguments: ArraySlice<String>) -> (any AsyncParsableCommand)? {
        switch arguments.first {
        case "status"?:
            guard let global = GlobalOptions.direct(arguments.dropFirst()) else { return nil }
            var status = Status()
            status.global = global
            return status
        case "show"?:
            let rest = arguments.dropFirst()
            guard let first = rest.first, let what = Show.What(rawValue: first),
                  let global = GlobalOptions.direct(rest.dropFirst()) else { return nil }
            var show = Show()
            show.what = what
            show.symbol = nil
            show.since = nil
            show.status = nil
            show.limit = nil
            show.maxAge = nil
            show.global = global
            guard (try? show.validate()) != nil else { return nil }
            return show
        default:
            return nil
        }
    }
}

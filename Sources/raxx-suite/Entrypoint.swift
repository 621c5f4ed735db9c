import RaxxAuthCommand
import RaxxCacheCommand
import RaxxCore
import RaxxDSRCommand
import RaxxNotifyCommand
import RaxxOrderCommand
import RaxxSandboxCommand

#if canImport(Glibc)
    import Glibc
#endif

/// The six tools in one executable, for installing: each tool's name is a link to it, and the name
/// it was started by chooses the tool (as busybox does). Six statically linked tools each carried
/// their own copy of the Swift runtime, Foundation and ICU's data (60–80 MiB apiece stripped);
/// one copy serves all six. Each branch is the tool's own entrypoint (`Sources/raxx-*`), unchanged.
@main
enum Main {
    static func main() {
        switch Tool(invokedAs: CommandLine.unsafeArgv[0]) {
        case .auth: Entrypoint.run(onThisThread: RaxxAuth.answersDirectly) { await RaxxAuth.mainAnsweringDirectly() }
        case .cache: Entrypoint.run(onThisThread: RaxxCache.answersDirectly, arenas: RaxxCache.arenas) { await RaxxCache.mainAnsweringDirectly() }
        case .order: Entrypoint.run { await RaxxOrder.mainReportingUsage() }
        case .notify: Entrypoint.run { await RaxxNotify.mainReportingUsage() }
        case .dsr: Entrypoint.run { await RaxxDSR.mainReportingUsage() }
        case .sandbox: Entrypoint.run { await RaxxSandboxTool.mainLayingOutHelp() }
        case nil:
            let names = Tool.allCases.map(\.rawValue).joined(separator: ", ")
            let message = "raxx-suite: start it by one of its names (\(names)), through a link; Scripts/install makes them\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
            exit(64)
        }
    }
}

enum Tool: String, CaseIterable {
    case auth = "raxx-auth", cache = "raxx-cache", order = "raxx-order", notify = "raxx-notify", dsr = "raxx-dsr", sandbox = "raxx-sandbox"

    /// The tool named by the last component of `argv[0]`.
    init?(invokedAs path: UnsafeMutablePointer<CChar>?) {
        guard let path else { return nil }
        // The last path component, by hand: split's generic arrays cost a tenth of a millisecond
        // of metadata at every start.
        let invoked = String(cString: path)
        let name = invoked.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(invoked[invoked.index(after: $0)...]) } ?? invoked
        self.init(rawValue: name)
    }
}

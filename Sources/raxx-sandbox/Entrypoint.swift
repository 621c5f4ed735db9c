import RaxxCore
import RaxxSandboxCommand

@main
enum Main {
    static func main() {
        Entrypoint.run { await RaxxSandboxTool.mainLayingOutHelp() }
    }
}

import RaxxCore
import RaxxNotifyCommand

@main
enum Main {
    static func main() {
        Entrypoint.run { await RaxxNotify.mainReportingUsage() }
    }
}

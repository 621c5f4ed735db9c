import RaxxCore
import RaxxDSRCommand

@main
enum Main {
    static func main() {
        Entrypoint.run { await RaxxDSR.mainReportingUsage() }
    }
}

import RaxxCore
import RaxxOrderCommand

@main
enum Main {
    static func main() {
        Entrypoint.run { await RaxxOrder.mainReportingUsage() }
    }
}

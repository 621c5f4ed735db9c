import RaxxCore
import RaxxAuthCommand

@main
enum Main {
    static func main() {
        Entrypoint.run { await RaxxAuth.main() }
    }
}

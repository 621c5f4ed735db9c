import RaxxCore
import RaxxCacheCommand

@main
enum Main {
    static func main() {
        Entrypoint.run { await RaxxCache.main() }
    }
}

import RaxxCacheCommand
import RaxxCore

@main
enum Main {
    static func main() {
        Entrypoint.run(onThisThread: RaxxCache.answersDirectly, arenas: RaxxCache.arenas) { await RaxxCache.mainAnsweringDirectly() }
    }
}

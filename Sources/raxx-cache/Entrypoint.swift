import RaxxCLI
import RaxxCacheCommand

@main
enum Entrypoint {
    static func main() async {
        await RaxxCache.main()
    }
}

import RaxxCLI
import RaxxAuthCommand

@main
enum Entrypoint {
    static func main() async {
        await RaxxAuth.main()
    }
}

import RaxxCLI
import RaxxNotifyCommand

@main
enum Entrypoint {
    static func main() async {
        await RaxxNotify.main()
    }
}

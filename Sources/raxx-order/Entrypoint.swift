import RaxxCLI
import RaxxOrderCommand

@main
enum Entrypoint {
    static func main() async {
        await RaxxOrder.main()
    }
}

import RaxxCLI
import RaxxDSRCommand

@main
enum Entrypoint {
    static func main() async {
        await RaxxDSR.main()
    }
}

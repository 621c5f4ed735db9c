import RaxxSandboxCommand

@main
enum Entrypoint {
    static func main() async {
        await RaxxSandboxTool.main()
    }
}

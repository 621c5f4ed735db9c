import RaxxAuthCommand
import RaxxCore

@main
enum Main {
    static func main() {
        Entrypoint.run(onThisThread: RaxxAuth.answersDirectly) { await RaxxAuth.mainAnsweringDirectly() }
    }
}

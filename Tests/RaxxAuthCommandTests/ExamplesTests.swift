import RaxxAuthCommand
import RaxxTestSupport
import Testing

@Suite struct ExamplesTests {
    /// The examples --help and the man page show run raxx-auth, parse, and show as written.
    @Test func theExamplesHold() {
        expectExamplesHold(RaxxAuth.self, tool: "raxx-auth", RaxxAuth.examples)
    }
}

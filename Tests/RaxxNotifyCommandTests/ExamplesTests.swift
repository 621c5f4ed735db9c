import RaxxNotifyCommand
import RaxxTestSupport
import Testing

@Suite struct ExamplesTests {
    /// The examples --help and the man page show run raxx-notify, parse, and show as written.
    @Test func theExamplesHold() {
        expectExamplesHold(RaxxNotify.self, tool: "raxx-notify", RaxxNotify.examples)
    }
}

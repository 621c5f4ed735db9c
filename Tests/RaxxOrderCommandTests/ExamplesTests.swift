import RaxxOrderCommand
import RaxxTestSupport
import Testing

@Suite struct ExamplesTests {
    /// The examples --help and the man page show run raxx-order, parse, and show as written.
    @Test func theExamplesHold() {
        expectExamplesHold(RaxxOrder.self, tool: "raxx-order", RaxxOrder.examples)
    }
}

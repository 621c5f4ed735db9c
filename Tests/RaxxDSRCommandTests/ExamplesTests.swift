import RaxxDSRCommand
import RaxxTestSupport
import Testing

@Suite struct ExamplesTests {
    /// The examples --help and the man page show run raxx-dsr, parse, and show as written.
    @Test func theExamplesHold() {
        expectExamplesHold(RaxxDSR.self, tool: "raxx-dsr", RaxxDSR.examples)
    }
}

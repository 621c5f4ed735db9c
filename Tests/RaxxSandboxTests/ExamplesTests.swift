import RaxxSandboxCommand
import RaxxTestSupport
import Testing

@Suite struct ExamplesTests {
    /// The examples --help and the man page show run raxx-sandbox, parse, and show as written.
    @Test func theExamplesHold() {
        expectExamplesHold(RaxxSandboxTool.self, tool: "raxx-sandbox", RaxxSandboxTool.examples)
    }
}

import RaxxCacheCommand
import RaxxTestSupport
import Testing

@Suite struct ExamplesTests {
    /// The examples --help and the man page show run raxx-cache, parse, and show as written.
    @Test func theExamplesHold() {
        expectExamplesHold(RaxxCache.self, tool: "raxx-cache", RaxxCache.examples)
    }
}

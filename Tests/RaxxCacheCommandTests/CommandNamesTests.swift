import RaxxCLI
import RaxxCacheCommand
import Testing

/// Every raxx-cache command names itself: no name is derived from a type at start-up (see CommandNames),
/// and the names stay the ones the tool has always answered to.
@Suite struct CommandNamesTests {
    @Test func everyCommandNamesItself() {
        #expect(
            CommandNames.paths(RaxxCache.self) == [
                "raxx-cache", "raxx-cache refresh", "raxx-cache show", "raxx-cache status", "raxx-cache verify", "raxx-cache purge", "raxx-cache version",
            ])
    }
}

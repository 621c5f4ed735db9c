import RaxxAuthCommand
import RaxxCLI
import Testing

/// Every raxx-auth command names itself: no name is derived from a type at start-up (see CommandNames),
/// and the names stay the ones the tool has always answered to.
@Suite struct CommandNamesTests {
    @Test func everyCommandNamesItself() {
        #expect(
            CommandNames.paths(RaxxAuth.self) == [
                "raxx-auth", "raxx-auth register", "raxx-auth login", "raxx-auth status", "raxx-auth whoami", "raxx-auth logout",
                "raxx-auth ping", "raxx-auth activity", "raxx-auth sessions", "raxx-auth passkeys", "raxx-auth passkeys list", "raxx-auth passkeys remove",
                "raxx-auth version",
            ])
    }
}

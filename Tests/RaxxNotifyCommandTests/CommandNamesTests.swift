import RaxxCLI
import RaxxNotifyCommand
import Testing

/// Every raxx-notify command names itself: no name is derived from a type at start-up (see CommandNames),
/// and the names stay the ones the tool has always answered to.
@Suite struct CommandNamesTests {
    @Test func everyCommandNamesItself() {
        #expect(
            CommandNames.paths(RaxxNotify.self) == [
                "raxx-notify", "raxx-notify list", "raxx-notify watch", "raxx-notify devices", "raxx-notify devices add",
                "raxx-notify devices list", "raxx-notify devices remove", "raxx-notify push", "raxx-notify version",
            ])
    }
}

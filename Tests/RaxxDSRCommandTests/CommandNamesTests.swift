import RaxxCLI
import RaxxDSRCommand
import Testing

/// Every raxx-dsr command names itself: no name is derived from a type at start-up (see CommandNames),
/// and the names stay the ones the tool has always answered to.
@Suite struct CommandNamesTests {
    @Test func everyCommandNamesItself() {
        #expect(
            CommandNames.paths(RaxxDSR.self) == [
                "raxx-dsr", "raxx-dsr open", "raxx-dsr verify-identity", "raxx-dsr extend", "raxx-dsr list", "raxx-dsr show",
                "raxx-dsr cancel", "raxx-dsr refuse", "raxx-dsr export", "raxx-dsr plan", "raxx-dsr apply", "raxx-dsr receipt",
                "raxx-dsr verify-receipt", "raxx-dsr audit", "raxx-dsr version",
            ])
    }
}

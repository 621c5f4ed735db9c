import RaxxCLI
import RaxxOrderCommand
import Testing

/// Every raxx-order command names itself: no name is derived from a type at start-up (see CommandNames),
/// and the names stay the ones the tool has always answered to.
@Suite struct CommandNamesTests {
    @Test func everyCommandNamesItself() {
        #expect(
            CommandNames.paths(RaxxOrder.self) == [
                "raxx-order", "raxx-order place", "raxx-order watch", "raxx-order list", "raxx-order show", "raxx-order cancel",
                "raxx-order reconcile", "raxx-order heartbeat", "raxx-order disarm", "raxx-order version",
            ])
    }
}

import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxOrders
import RaxxStore

extension RaxxOrder {
    /// `raxx-order disarm`: end the dead man's switch.
    public struct Disarm: RaxxOrderVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "disarm",
            abstract: "Disarm the server's dead man's switch; the orders it covered stay as they are.",
            discussion: "Prints the switch as it now stands (armed false). " + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let session = try context.storedSession()
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            let state = try await CancelAfterSwitch(
                api: api, journal: try context.stores.journal(), accountID: session.accountID,
                clock: context.clock
            ).disarm()
            try context.emit([state], columns: switchColumns) { switchRow($0, in: context) }
        }
    }
}

import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxDomain
import RaxxOrders
import RaxxStore
import RaxxWire

extension RaxxOrder {
    /// `raxx-order heartbeat`: one renewal of the dead man's switch.
    public struct Heartbeat: RaxxOrderVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "heartbeat",
            abstract: "Renew the server's dead man's switch once (arming it if needed).",
            discussion: """
                For scripts that placed orders with --cancel-after: run it from a loop or cron more often than \
                the timeout, and the server keeps the orders; stop, and it cancels them when the timeout runs \
                out. The timeout is --cancel-after, else RAXX_CANCEL_AFTER, else the one last armed from here, \
                else 60s. Prints the switch as it now stands: armed, timeout_s, fires_at and the number of \
                orders under it. 
                """ + connectivity.helpLine
        )

        @Option(
            name: .customLong("cancel-after"),
            help: ArgumentHelp("The timeout, 5s to 10m (default: RAXX_CANCEL_AFTER, the last one armed, or 60s).", valueName: "duration"))
        var cancelAfter: RaxxDuration?
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func validate() throws {
            try validateCancelAfter(cancelAfter)
        }

        public func run(_ context: CommandContext) async throws {
            let session = try context.storedSession()
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            let journal = try context.stores.journal()
            let last = try? journal.switchWatch().flatMap { $0.accountID == session.accountID ? $0.timeout : nil }
            let timeout =
                try cancelAfter.map(CancelAfterSwitch.seconds)
                ?? context.configuration.cancelAfter.map(CancelAfterSwitch.seconds)
                ?? last ?? CancelAfterSwitch.seconds(CancelAfterSwitch.heartbeatDefault)
            let state = try await CancelAfterSwitch(api: api, journal: journal, accountID: session.accountID, clock: context.clock)
                .arm(timeout: timeout)
            try context.emit([state], columns: switchColumns) { switchRow($0, in: context) }
        }
    }
}

let switchColumns: [Table.Column] = [.init("Armed"), .init("Timeout", .right), .init("Fires at"), .init("Orders", .right)]

/// The switch as a row; its deadline as every sentence says a time (`peopleMoment`).
func switchRow(_ s: Components.Schemas.CancelAfter, in context: CommandContext) -> [String] {
    [s.armed ? "yes" : "no", s.armed ? "\(s.timeoutS)s" : "-", s.firesAt.map(context.peopleMoment) ?? "-", "\(s.orders)"]
}

extension CommandContext {
    /// Tells the trader on stderr, once, which orders the server's dead man's switch cancelled
    /// since the last run (from the alerts), when a switch was armed from here. Never fails the
    /// command: what cannot be asked now is told next time.
    func tellSwitchCancellations(api: any APIProtocol) async {
        guard let journal = try? stores.journal(), let watch = try? journal.switchWatch(),
            let session = try? storedSession(), watch.accountID == session.accountID
        else { return }
        let report = SwitchReport(api: api, journal: journal, accountID: session.accountID, clock: clock)
        try? await report.run { alerts in
            say("raxx-order: The server cancelled \(alerts.count) order\(alerts.count == 1 ? "" : "s") while this device was away:")
            for alert in alerts { say("raxx-order: " + SwitchReport.message(alert, moment: peopleMoment)) }
        }
    }
}

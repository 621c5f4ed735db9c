import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDomain
import RaxxOrders
import RaxxStore
import RaxxWire

extension RaxxOrder {
    /// `raxx-order watch [ORDER_ID…]`: follow orders until each is final, with the dead man's switch armed.
    public struct Watch: RaxxOrderVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "watch",
            abstract: "Follow orders until each is final, keeping the server's dead man's switch armed.",
            discussion: """
                Follows the orders given (by default every open order of the account) until each is filled, \
                cancelled, rejected or expired, printing one JSON line per status change (a live table on a \
                terminal). Meanwhile the session's dead man's switch is armed at the server with the orders \
                under it, and renewed every third of its timeout (--cancel-after, default 30s, or \
                RAXX_CANCEL_AFTER): if this process loses the connection, the server cancels them when the \
                timeout runs out. On a lost connection it says at once, on stderr, when the server will cancel \
                the orders unless the connection returns, and keeps trying; on recovery it reads the orders \
                again first, then tells each one's fate, and exits 69 if the switch cancelled any. When every \
                order is final it disarms the switch and exits 0. On a terminal the table shows the switch and \
                when it would fire. Stopping the watch (Ctrl-C, SIGINT or SIGTERM) is a decision, not a lost \
                connection: the switch is disarmed and the orders stay open (exit 0); with --keep-armed it stays \
                armed instead, and fires unless renewed with raxx-order heartbeat or ended with raxx-order disarm. \
                The cancellations a watch reports are not reported again by the next command. 
                """ + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The orders to follow (default: every open order).", valueName: "order-id"))
        var ids: [String] = []
        @Option(
            name: .customLong("cancel-after"),
            help: ArgumentHelp("The dead man's switch's timeout, 5s to 10m (default 30s, or RAXX_CANCEL_AFTER).", valueName: "duration"))
        var cancelAfter: RaxxDuration?
        @Flag(name: .customLong("keep-armed"), help: "When the watch is stopped (Ctrl-C), leave the switch armed instead of disarming it.")
        var keepArmed = false
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func validate() throws {
            try validateCancelAfter(cancelAfter)
        }

        public func run(_ context: CommandContext) async throws {
            let session = try context.storedSession()
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            var ids = self.ids
            if ids.isEmpty {
                for status in OrderStatus.working {
                    ids += try await api.listOrders(query: .init(status: status, limit: 1000)).checked().ok.body.json.orders.map(\.id)
                }
            }
            guard !ids.isEmpty else {
                context.say("raxx-order: No open orders to watch.")
                return
            }
            let timeout = try CancelAfterSwitch.seconds(cancelAfter ?? context.configuration.cancelAfter ?? CancelAfterSwitch.watchDefault)
            try await followOrders(ids, timeout: timeout, keepArmed: keepArmed, api: api, accountID: session.accountID, context: context)
        }
    }
}

/// `--cancel-after` within the switch's bounds.
func validateCancelAfter(_ timeout: RaxxDuration?) throws {
    guard let timeout else { return }
    guard RaxxConfiguration.cancelAfterRange.contains(timeout) else {
        throw ValidationError("--cancel-after must be between 5s and 10m.")
    }
}

/// Follows `ids` with the switch armed for `timeout` seconds (`raxx-order watch`, `place --watch`);
/// throws exit 69 when the switch cancelled any of them. Stopped by the person, it disarms the
/// switch unless `keepArmed`.
func followOrders(_ ids: [String], timeout: Int, keepArmed: Bool, api: any APIProtocol, accountID: String, context: CommandContext) async throws {
    let cancelAfter = CancelAfterSwitch(api: api, journal: try context.stores.journal(), accountID: accountID, clock: context.clock)
    let display = WatchDisplay(context)
    var watcher = OrderWatcher(
        api: api, cancelAfter: cancelAfter, timeout: timeout, monotonic: context.world.monotonic,
        sleep: context.world.sleep, say: { display.say("raxx-order: " + $0) },
        moment: { context.peopleMoment($0) })
    watcher.armed = { display.switchArmed(until: $0) }
    let following = Task { [watcher] in try await watcher.watch(ids) { changed, all in try display.show(changed, all: all) } }
    let interrupts = context.world.onInterrupt { _ in following.cancel() }
    defer { withExtendedLifetime(interrupts) {} }
    switch try await following.value {
    case .allFinal:
        return
    case .switchFired(let orders):
        // Told here: the next command does not tell it again.
        try? await SwitchReport(api: api, journal: try context.stores.journal(), accountID: accountID, clock: context.clock).run { _ in }
        throw RaxxError(
            code: .cancelledBySwitch,
            message: "\(orders.count) order\(orders.count == 1 ? " was" : "s were") cancelled by the server's dead man's switch, "
                + "which fired because it was not renewed in time (the connection was gone).",
            hint: "Nothing is placed again by itself: place the order again if you still want it.")
    case .interrupted(let firesAt):
        let until = firesAt.map { context.peopleMoment($0) } ?? "its deadline"
        if keepArmed {
            display.say(
                "raxx-order: Stopped watching. The dead man's switch stays armed (--keep-armed): the server cancels the open orders at "
                    + until + " unless it is renewed (raxx-order heartbeat) or disarmed (raxx-order disarm).")
            return
        }
        do {
            try await cancelAfter.disarm()
            display.say(
                "raxx-order: Stopped watching. The dead man's switch is disarmed: the open orders stay open "
                    + "(raxx-order cancel ORDER_ID cancels one).")
        } catch {
            display.say(
                "raxx-order: Stopped watching, but the dead man's switch could not be disarmed ("
                    + ErrorMapping.raxxError(from: error).message + "): the server cancels the open orders at " + until
                    + " unless it is renewed (raxx-order heartbeat) or disarmed (raxx-order disarm).")
        }
    }
}

/// What a watch shows: one JSON line per status change, or on a terminal a table of every watched
/// order, redrawn in place as they change (a plain row per change when text goes to a pipe).
// @unchecked: keeps NSLock held while drawing, so a redraw and a message never interleave on the terminal.
final class WatchDisplay: @unchecked Sendable {
    private let context: CommandContext
    private let lock = NSLock()
    /// Lines of the table last drawn, to move back over (0: draw afresh below).
    private var drawn = 0
    /// The orders last drawn, and when the switch would fire, for a redraw when it is renewed.
    private var last: [Components.Schemas.Order] = []
    private var firesAt: Date?

    init(_ context: CommandContext) { self.context = context }

    func show(_ changed: [Components.Schemas.Order], all: [Components.Schemas.Order]) throws {
        try lock.withLock {
            let out = context.io.stdout
            switch context.format {
            case .json:
                for order in changed {
                    do { out.write(try JSONLines.line(order) + "\n") } catch {
                        throw RaxxError(code: .internal, message: "Could not encode the output: \(error)")
                    }
                }
            case .text where context.io.stdoutIsTTY:
                last = all
                draw()
            case .text:
                for order in changed { out.write(TerminalText.printable(orderRow(order, time: context.peopleTime).joined(separator: "  ")) + "\n") }
            }
            out.flush()
        }
    }

    /// The live table (on a terminal), redrawn in place, with the switch under it.
    private func draw() {
        let out = context.io.stdout
        var table = Table(columns: orderColumns, rows: last.map { orderRow($0, time: context.peopleTime) }).render(
            colour: context.configuration.colour,
            width: context.io.terminalColumns)
        if let firesAt {
            table += "Dead man's switch: armed; the server cancels the open orders at \(context.peopleMoment(firesAt)) unless it is renewed\n"
        }
        if drawn > 0 { out.write("\u{1B}[\(drawn)A\u{1B}[J") }
        out.write(table)
        drawn = table.reduce(0) { $1 == "\n" ? $0 + 1 : $0 }
    }

    /// The switch was armed or renewed: the live table shows until when.
    func switchArmed(until firesAt: Date?) {
        lock.withLock {
            self.firesAt = firesAt
            guard context.format == .text, context.io.stdoutIsTTY, !last.isEmpty else { return }
            draw()
            context.io.stdout.flush()
        }
    }

    /// A message on stderr; a table on the same terminal is drawn afresh below it next time.
    func say(_ message: String) {
        lock.withLock {
            context.say(message)
            drawn = 0
        }
    }
}

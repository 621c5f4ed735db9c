import Foundation
import OpenAPIRuntime
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxSecrets
import RaxxVault
import Synchronization

/// Everything outside a command that its logic may touch, each piece replaceable. `live` builds
/// the real world from the configuration; tests build theirs (RaxxTestSupport's `TestWorld`),
/// where any piece they did not plan for fails the test instead of reaching a real server, file or
/// clock.
public struct World: Sendable {
    /// Wall-clock time.
    public var now: @Sendable () -> Date
    /// Now by the server's clock (the local clock corrected by the skew the last answer showed):
    /// what order deadlines are computed and judged with.
    public var serverNow: @Sendable () -> Date
    /// Monotonic time, for measuring how long something took (latency, rates).
    public var monotonic: @Sendable () -> Duration
    /// A fresh unique id (generated client order ids).
    public var newID: @Sendable () -> String
    /// Waits (a backoff before trying the network again).
    public var sleep: @Sendable (Duration) async throws -> Void
    /// Runs `action` with the signal when the person interrupts (SIGINT) or the system asks the
    /// process to end (SIGTERM), for as long as the answer is kept.
    public var onInterrupt: @Sendable (_ action: @escaping @Sendable (_ signal: Int32) -> Void) -> any Sendable
    /// Ends the process at once with the status (what an interrupt at a prompt does, once it has
    /// said what became of the work).
    public var end: @Sendable (_ status: Int32) -> Void = { Foundation.exit($0) }
    /// The terminal's part: asking for a PIN, or reading it from `--pin-fd`.
    public var pinEntry: any PINEntry
    /// The Raptor API, with the given middlewares in front (the session's bearer token).
    public var raptor: any RaptorConnection
    /// This device's keystore.
    public var keystore: any KeystoreAccess
    /// Whose data this device keeps for the server: the account folders of the local stores.
    public var accounts: any LocalAccounts
    /// What only some tools have (the cache and the order journal, the push service), found by type
    /// with `CommandContext.service()`: a tool's world holds what its verbs use, and a test world
    /// what the test plans.
    public var services: [Provided]

    public init(
        now: @escaping @Sendable () -> Date, serverNow: (@Sendable () -> Date)? = nil, monotonic: @escaping @Sendable () -> Duration,
        newID: @escaping @Sendable () -> String,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        onInterrupt: @escaping @Sendable (_ action: @escaping @Sendable (_ signal: Int32) -> Void) -> any Sendable = { _ in 0 },
        pinEntry: any PINEntry, raptor: any RaptorConnection,
        keystore: any KeystoreAccess, accounts: any LocalAccounts, services: [Provided] = []
    ) {
        self.now = now
        self.serverNow = serverNow ?? now
        self.monotonic = monotonic
        self.newID = newID
        self.sleep = sleep
        self.onInterrupt = onInterrupt
        self.pinEntry = pinEntry
        self.raptor = raptor
        self.keystore = keystore
        self.accounts = accounts
        self.services = services
    }

    /// The real world of `tool`: the system clock, random ids, the terminal, Raptor over libcurl
    /// at the configured server, and the keystore in the state folder.
    public static func live(tool: String, configuration: RaxxConfiguration, services: [Provided]) -> World {
        let start = ContinuousClock.now
        let serverClock = ServerClock()
        return World(
            now: { Date() },
            serverNow: { serverClock.now() },
            monotonic: { ContinuousClock.now - start },
            newID: { UUID.randomString() },
            sleep: { try await Task.sleep(for: $0) },
            onInterrupt: { action in Interrupts(action) },
            pinEntry: TerminalPINEntry(),
            raptor: CurlRaptorConnection(tool: tool, configuration: configuration, serverClock: serverClock),
            // A process holding the keystore's lock is renewing over the network: no wait outlasts
            // the transport's own bound for a request.
            keystore: Keystore(
                directoryPath: configuration.stateDirectoryPath, machineIDPath: configuration.machineIDPath,
                lockWait: configuration.totalTimeout, folders: PrivateFolders(configuration)),
            accounts: FileLocalAccounts(configuration),
            services: services)
    }
}

/// Where the Raptor API comes from.
public protocol RaptorConnection: Sendable {
    /// The API with `middlewares` run in front of every call.
    func api(middlewares: [any ClientMiddleware]) -> any APIProtocol
    /// The same API for answers read as bytes (the sync pages), or nil where there is none (a
    /// test's stub: its callers use `api` instead).
    func raw(middlewares: [any ClientMiddleware]) -> RawRaptor?
    /// Gets ready for the first request while the command does local work (loads libcurl).
    func prepare()
}

extension RaptorConnection {
    public func raw(middlewares: [any ClientMiddleware]) -> RawRaptor? { nil }
    public func prepare() {}
}

/// Raptor over libcurl at the configured server.
public struct CurlRaptorConnection: RaptorConnection {
    let tool: String
    let configuration: RaxxConfiguration
    let serverClock: ServerClock?
    /// The clients of this connection (anonymous, signed in, raw) share one transport, made on
    /// first use: a batch of orders goes over the connection its checks opened, not a new one.
    private let shared = SharedTransport()

    public init(tool: String, configuration: RaxxConfiguration, serverClock: ServerClock? = nil) {
        self.tool = tool
        self.configuration = configuration
        self.serverClock = serverClock
    }

    public func api(middlewares: [any ClientMiddleware]) -> any APIProtocol {
        RaptorClient.make(tool: tool, configuration: configuration, serverClock: serverClock, middlewares: middlewares, transport: transport())
    }

    public func prepare() { CurlTransport.preload() }

    public func raw(middlewares: [any ClientMiddleware]) -> RawRaptor? {
        RaptorClient.makeRaw(tool: tool, configuration: configuration, serverClock: serverClock, middlewares: middlewares, transport: transport())
    }

    private func transport() -> CurlTransport {
        shared.get { RaptorClient.transport(tool: tool, configuration: configuration) }
    }

    private final class SharedTransport: Sendable {
        private let transport = Mutex<CurlTransport?>(nil)

        /// `make` runs outside the lock: two first callers may both make one (it loads nothing
        /// until its first request), and the first kept is the one both get.
        func get(_ make: () -> CurlTransport) -> CurlTransport {
            if let kept = transport.withLock({ $0 }) { return kept }
            let made = make()
            return transport.withLock { transport in
                if let kept = transport { return kept }
                transport = made
                return made
            }
        }
    }
}

/// Where a PIN comes from when a ceremony needs one.
public protocol PINEntry: Sendable {
    /// Asks on the terminal (twice when `confirm`), or reads `--pin-fd`.
    func read(from source: PINSource, prompt: String, confirm: Bool) throws(RaxxError) -> SecretBytes
    /// Asks on the terminal for an emailed one-time code, or reads `--code-fd`.
    func readCode(from source: PINSource, prompt: String) throws(RaxxError) -> String
    /// Asks `question` on the terminal: whether the answer was yes; nil when there is no terminal.
    func confirm(_ question: String) -> Bool?
}

/// The controlling terminal (`/dev/tty`), or the file descriptor `--pin-fd` names.
public struct TerminalPINEntry: PINEntry {
    public init() {}

    public func read(from source: PINSource, prompt: String, confirm: Bool) throws(RaxxError) -> SecretBytes {
        try PIN.read(from: source, prompt: prompt, confirm: confirm)
    }

    public func readCode(from source: PINSource, prompt: String) throws(RaxxError) -> String {
        try PIN.readCode(from: source, prompt: prompt)
    }

    public func confirm(_ question: String) -> Bool? { PIN.confirm(question) }
}

/// SIGINT and SIGTERM, caught while kept: the action runs instead of the default of dying mid-write.
/// (Its sources are only created and cancelled, never shared while changing: unchecked Sendable.)
// @unchecked: holds DispatchSourceSignal objects, which are not Sendable.
final class Interrupts: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ action: @escaping @Sendable (_ signal: Int32) -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { action(number) }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

/// A service of a tool's world, kept as the type its commands ask for: `Provided(stores, as: (any
/// LocalStores).self)` is found by `context.service((any LocalStores).self)`, and by nothing else.
/// Finding it is a comparison of two types, not a cast to a protocol: such a cast looks the
/// conformance up in the runtime's tables, a scan of every conformance in the binary (about 0.15 ms
/// of an offline read that takes 3).
public struct Provided: Sendable {
    private let box: AnyObject & Sendable

    public init<Service: Sendable>(_ service: Service, as type: Service.Type) {
        box = Box(service)
    }

    /// The service, when it was provided as `type`.
    public func value<Service>(as type: Service.Type) -> Service? {
        (box as? Box<Service>)?.value
    }

    // @unchecked: only made with a Sendable value (see `init`), which `value(as:)`'s cast cannot require.
    private final class Box<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }
}

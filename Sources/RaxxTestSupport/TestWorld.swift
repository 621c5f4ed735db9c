import Foundation
import OpenAPIRuntime
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxStore
import RaxxVault
#if canImport(Testing)
import Testing
#endif

/// A command's world for in-process tests: captured streams, and every piece of the outside world
/// (clock, ids, PIN entry, Raptor, keystore, stores) only as the test gives it. Any piece it did
/// not give fails the test when touched — no real connection, file, terminal or clock by accident.
public final class TestWorld: @unchecked Sendable {
    public let stdout = CapturedSink()
    public let stderr = CapturedSink()
    /// Standard input, when the test gives one.
    public var stdin: String?
    public var stdinIsTTY = false
    public var stdoutIsTTY = false
    public var stderrIsTTY = false
    /// The wall clock, when the test gives one.
    public var clock: TestClock?
    /// How far the server's clock is ahead of the wall clock (as the last answer's Date showed).
    public var serverSkew: TimeInterval = 0
    /// Ids handed out in order, when the test gives them.
    public var ids: [String]?
    /// The PIN typed at the prompt (or read from --pin-fd), when the test gives one.
    public var pin: String?
    /// The one-time code "typed" when a registration asks for the emailed one.
    public var code: String?
    /// The Raptor API's planned answers.
    public let api = StubAPI()
    /// The keystore, when the test gives one.
    public var keystore: MemoryKeystore?
    /// Whose data the device keeps (in memory: what was adopted and forgotten).
    public var accounts = MemoryLocalAccounts()
    /// Services of the tool (its stores), each as the type its commands ask for.
    public var services: [Provided] = []
    /// The tool's stores (provided as `any LocalStores`), when the test gives them.
    public var stores: (any LocalStores)?
    /// The environment the configuration is read from (nothing of it is touched).
    public var environment: [String: String] = ["RAXX_HOME": "/nonexistent/raxx-test-home"]

    private let lock = NSLock()
    private var nextID = 0
    private var interruptActions: [@Sendable () -> Void] = []
    private var slept: [Duration] = []

    /// The waits the command asked for (they return at once).
    public var sleeps: [Duration] { lock.withLock { slept } }

    /// Interrupts the command as SIGINT would.
    public func interrupt() {
        for action in lock.withLock({ interruptActions }) { action() }
    }

    public init() {}

    /// The context a command runs in, for `tool` with `requirement`.
    public func context(tool: String, requirement: ConnectivityRequirement, format: OutputFormat) throws -> CommandContext {
        let io = CommandIO(stdin: stdin.map(StringSource.init) ?? StringSource(unplanned: true), stdout: stdout, stderr: stderr,
                           stdoutIsTTY: stdoutIsTTY, stderrIsTTY: stderrIsTTY, stdinIsTTY: stdinIsTTY)
        let world = World(
            now: { [clock] in
                guard let clock else { recordUnplanned("Unplanned use of the wall clock"); return Date(timeIntervalSince1970: 0) }
                return clock.now
            },
            serverNow: { [clock, serverSkew] in
                guard let clock else { recordUnplanned("Unplanned use of the server's clock"); return Date(timeIntervalSince1970: 0) }
                return clock.now.addingTimeInterval(serverSkew)
            },
            monotonic: { [clock] in
                guard let clock else { recordUnplanned("Unplanned use of the monotonic clock"); return .zero }
                return .milliseconds(Int64(clock.now.timeIntervalSince1970 * 1000))
            },
            newID: { [self] in
                lock.withLock {
                    guard let ids, nextID < ids.count else { recordUnplanned("Unplanned id generation"); return "unplanned-id" }
                    defer { nextID += 1 }
                    return ids[nextID]
                }
            },
            sleep: { [self] duration in lock.withLock { slept.append(duration) } },
            onInterrupt: { [self] action in lock.withLock { interruptActions.append(action) }; return 0 },
            pinEntry: FixedPINEntry(pin: pin, code: code),
            raptor: api,
            keystore: keystore ?? MemoryKeystore(unplanned: true),
            accounts: accounts,
            services: services + (stores.map { [Provided($0, as: (any LocalStores).self)] } ?? []))
        return CommandContext(tool: tool, io: io, format: format, configuration: try RaxxConfiguration(environment: environment),
                              requirement: requirement, world: world)
    }

    /// Parses `arguments` as `Command` and runs it in this world; answers its exit status.
    public func run<Command: RaxxCommand>(_ command: Command.Type, _ arguments: [String] = []) async throws -> RaxxCore.ExitStatus {
        let parsed = try Command.parse(arguments)
        let format = parsed.global.resolvedFormat(stdoutIsTTY: stdoutIsTTY)
        let context = try self.context(tool: Command.tool, requirement: parsed.requirement, format: format)
        return await Command.execute(parsed, in: context)
    }

    /// Every JSON line written to stdout, decoded as objects.
    public var jsonLines: [[String: Any]] {
        stdout.contents.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }
}

/// Input from a string (or none the test planned for), handed out in small pieces when read as
/// it comes, so that readers meet lines split across reads.
final class StringSource: InputSource, @unchecked Sendable {
    let bytes: [UInt8]
    let unplanned: Bool
    private let lock = NSLock()
    private var offset = 0

    init(_ text: String) { bytes = Array(text.utf8); unplanned = false }
    init(unplanned: Bool) { bytes = []; self.unplanned = unplanned }

    func readAll() throws(RaxxError) -> [UInt8] {
        if unplanned { recordUnplanned("Unplanned read of standard input") }
        return bytes
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RaxxError) -> Int {
        if unplanned { recordUnplanned("Unplanned read of standard input") }
        return lock.withLock {
            let n = min(buffer.count, bytes.count - offset, 7 + offset % 13)
            guard n > 0 else { return 0 }
            bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            offset += n
            return n
        }
    }
}

/// A PIN (and an emailed code) "typed" at the prompt.
struct FixedPINEntry: PINEntry {
    let pin: String?
    var code: String? = nil

    func readCode(from source: PINSource, prompt: String) throws(RaxxError) -> String {
        guard let code else {
            recordUnplanned("Unplanned code prompt: \(prompt)")
            throw RaxxError.usage("No code was planned.")
        }
        return code
    }

    func read(from source: PINSource, prompt: String, confirm: Bool) throws(RaxxError) -> SecretBytes {
        guard let pin else {
            recordUnplanned("Unplanned PIN prompt: \(prompt)")
            throw RaxxError.usage("No PIN was planned.")
        }
        return SecretBytes(copying: Array(pin.utf8))
    }
}

/// `LocalAccounts` in memory: the account kept, and those forgotten.
public final class MemoryLocalAccounts: LocalAccounts, @unchecked Sendable {
    private let lock = NSLock()
    private var kept: String?
    private var gone: [String] = []

    public init(current: String? = nil) { kept = current }

    /// The accounts forgotten, in order.
    public var forgotten: [String] { lock.withLock { gone } }

    public func current() throws(RaxxError) -> String? { lock.withLock { kept } }
    public func adopt(_ accountID: String, sessionKeptFromBefore: Bool) throws(RaxxError) { lock.withLock { kept = accountID } }
    public func forget(_ accountID: String) throws(RaxxError) {
        lock.withLock {
            gone.append(accountID)
            if kept == accountID { kept = nil }
        }
    }
}

/// A keystore in memory, with an in-process lock.
public final class MemoryKeystore: KeystoreAccess, @unchecked Sendable {
    private let lock = NSLock()
    private var contents: KeystoreContents?
    private let unplanned: Bool
    /// How many times it was saved.
    public private(set) var saves = 0

    public init(_ contents: KeystoreContents = KeystoreContents()) {
        self.contents = contents
        unplanned = false
    }

    init(unplanned: Bool) {
        self.unplanned = unplanned
        contents = KeystoreContents()
    }

    /// Unique per keystore: renewals are shared by location within a process.
    public let location = "memory:keystore/" + UUID().uuidString

    /// What it holds now (nil once destroyed).
    public var current: KeystoreContents? { lock.withLock { contents } }

    public func load() throws(RaxxError) -> KeystoreContents {
        if unplanned { recordUnplanned("Unplanned keystore read") }
        return lock.withLock { contents ?? KeystoreContents() }
    }

    public func save(_ contents: KeystoreContents) throws(RaxxError) {
        if unplanned { recordUnplanned("Unplanned keystore write") }
        lock.withLock {
            self.contents = contents
            saves += 1
        }
    }

    public func destroy() throws(RaxxError) {
        if unplanned { recordUnplanned("Unplanned keystore removal") }
        lock.withLock { contents = nil }
    }

    /// Runs when the lock is taken, before the body: another process's doing while this one waited.
    public var whileWaitingForTheLock: (@Sendable () -> Void)?

    public func withLock<T>(_ body: () async throws -> T) async throws -> T {
        whileWaitingForTheLock?()
        return try await body()
    }
}

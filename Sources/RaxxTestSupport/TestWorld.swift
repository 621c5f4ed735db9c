import Foundation
import OpenAPIRuntime
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxSecrets
import RaxxStore
import RaxxVault
import Synchronization

#if canImport(Testing)
    import Testing
#endif

/// A command's world for in-process tests: captured streams, and every piece of the outside world
/// (clock, ids, PIN entry, Raptor, keystore, stores) only as the test gives it. Any piece it did
/// not give fails the test when touched — no real connection, file, terminal or clock by accident.
public final class TestWorld: Sendable {
    public let stdout = CapturedSink()
    public let stderr = CapturedSink()
    /// Standard input, when the test gives one.
    public var stdin: String? {
        get { self[\.stdin] }
        set { self[\.stdin] = newValue }
    }
    public var stdinIsTTY: Bool {
        get { self[\.stdinIsTTY] }
        set { self[\.stdinIsTTY] = newValue }
    }
    public var stdoutIsTTY: Bool {
        get { self[\.stdoutIsTTY] }
        set { self[\.stdoutIsTTY] = newValue }
    }
    public var stderrIsTTY: Bool {
        get { self[\.stderrIsTTY] }
        set { self[\.stderrIsTTY] = newValue }
    }
    /// The terminal's height, when stdout is one.
    public var terminalRows: Int? {
        get { self[\.terminalRows] }
        set { self[\.terminalRows] = newValue }
    }
    /// The terminal's width, when the test gives one.
    public var terminalColumns: Int? {
        get { self[\.terminalColumns] }
        set { self[\.terminalColumns] = newValue }
    }
    /// What went through the pager, and with which command (the pager writes nothing here).
    public var paged: [(command: String, text: String)] { state.withLock { $0.paged } }
    /// The wall clock, when the test gives one.
    public var clock: TestClock? {
        get { self[\.clock] }
        set { self[\.clock] = newValue }
    }
    /// How far the server's clock is ahead of the wall clock (as the last answer's Date showed).
    public var serverSkew: TimeInterval {
        get { self[\.serverSkew] }
        set { self[\.serverSkew] = newValue }
    }
    /// Ids handed out in order, when the test gives them.
    public var ids: [String]? {
        get { self[\.ids] }
        set { self[\.ids] = newValue }
    }
    /// The PIN typed at the prompt (or read from --pin-fd), when the test gives one.
    public var pin: String? {
        get { self[\.pin] }
        set { self[\.pin] = newValue }
    }
    /// PINs typed at successive prompts, before `pin` answers the rest.
    public var pinsTyped: [String] {
        get { self[\.pinsTyped] }
        set { self[\.pinsTyped] = newValue }
    }
    /// The one-time code "typed" when a registration asks for the emailed one.
    public var code: String? {
        get { self[\.code] }
        set { self[\.code] = newValue }
    }
    /// Codes typed at successive code prompts, before `code` answers the rest.
    public var codesTyped: [String] {
        get { self[\.codesTyped] }
        set { self[\.codesTyped] = newValue }
    }
    /// The answer typed at a yes/no question on the terminal, when the test gives one.
    public var answer: Bool? {
        get { self[\.answer] }
        set { self[\.answer] = newValue }
    }
    /// The yes/no questions asked on the terminal.
    public var questions: [String] { state.withLock { $0.questions } }
    /// The Raptor API's planned answers.
    public let api = StubAPI()
    /// The keystore, when the test gives one.
    public var keystore: MemoryKeystore? {
        get { self[\.keystore] }
        set { self[\.keystore] = newValue }
    }
    /// Whose data the device keeps (in memory: what was adopted and forgotten).
    public var accounts: MemoryLocalAccounts {
        get { self[\.accounts] }
        set { self[\.accounts] = newValue }
    }
    /// Services of the tool (its stores), each as the type its commands ask for.
    public var services: [Provided] {
        get { self[\.services] }
        set { self[\.services] = newValue }
    }
    /// The tool's stores (provided as `any LocalStores`), when the test gives them.
    public var stores: (any LocalStores)? {
        get { self[\.stores] }
        set { self[\.stores] = newValue }
    }
    /// The environment the configuration is read from (nothing of it is touched).
    public var environment: [String: String] {
        get { self[\.environment] }
        set { self[\.environment] = newValue }
    }

    /// What the test gives (above) and what the command did (its ids, waits and interrupt actions).
    private let state = Mutex(State())

    private struct State {
        var stdin: String?
        var stdinIsTTY = false
        var stdoutIsTTY = false
        var stderrIsTTY = false
        var terminalRows: Int?
        var terminalColumns: Int?
        var paged: [(command: String, text: String)] = []
        var clock: TestClock?
        var serverSkew: TimeInterval = 0
        var ids: [String]?
        var pin: String?
        var pinsTyped: [String] = []
        var code: String?
        var codesTyped: [String] = []
        var answer: Bool?
        var questions: [String] = []
        var keystore: MemoryKeystore?
        var accounts = MemoryLocalAccounts()
        var services: [Provided] = []
        var stores: (any LocalStores)?
        var environment: [String: String] = ["RAXX_HOME": "/nonexistent/raxx-test-home", "TZ": "UTC"]
        var nextID = 0
        var interruptActions: [@Sendable (Int32) -> Void] = []
        var ended: [Int32] = []
        var slept: [Duration] = []
    }

    /// One field of the state, read or set under the mutex.
    private subscript<Value: Sendable>(field: WritableKeyPath<State, Value>) -> Value {
        get { state.withLock { $0[keyPath: field] } }
        set { state.withLock { $0[keyPath: field] = newValue } }
    }

    /// The waits the command asked for (they return at once).
    public var sleeps: [Duration] { state.withLock { $0.slept } }

    /// Interrupts the command as SIGINT would.
    /// As SIGINT (or `signal`) would: every action kept for it runs.
    public func interrupt(_ signal: Int32 = SIGINT) {
        for action in state.withLock({ $0.interruptActions }) { action(signal) }
    }

    /// The statuses the command asked to end the process with at once (`World.end`), which a test
    /// world records instead.
    public var ended: [Int32] { state.withLock { $0.ended } }

    public init() {}

    /// The context a command runs in, for `tool` with `requirement`.
    public func context(
        tool: String, requirement: ConnectivityRequirement, format: OutputFormat, quiet: Bool = false,
        noPager: Bool = false, errorFormat: OutputFormat? = nil
    ) throws -> CommandContext {
        let io = CommandIO(
            stdin: stdin.map(StringSource.init) ?? StringSource(unplanned: true), stdout: stdout, stderr: stderr,
            stdoutIsTTY: stdoutIsTTY, stderrIsTTY: stderrIsTTY, stdinIsTTY: stdinIsTTY, terminalRows: terminalRows,
            terminalColumns: terminalColumns,
            page: { [self] text, command in
                self.state.withLock { $0.paged.append((command, text)) }; return true
            })
        var world = World(
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
                let id: String? = state.withLock { state in
                    guard let ids = state.ids, state.nextID < ids.count else { return nil }
                    defer { state.nextID += 1 }
                    return ids[state.nextID]
                }
                guard let id else { recordUnplanned("Unplanned id generation"); return "unplanned-id" }
                return id
            },
            sleep: { [self] duration in state.withLock { $0.slept.append(duration) } },
            onInterrupt: { [self] action in
                state.withLock { $0.interruptActions.append(action) }; return 0
            },
            pinEntry: FixedPINEntry(
                pin: { [self] in
                    self.state.withLock { $0.pinsTyped.isEmpty ? $0.pin : $0.pinsTyped.removeFirst() }
                }, code: { [self] in self.state.withLock { $0.codesTyped.isEmpty ? $0.code : $0.codesTyped.removeFirst() } },
                answer: { [self] in self.state.withLock { $0.answer } }, asked: { [self] q in self.state.withLock { $0.questions.append(q) } }),
            raptor: api,
            keystore: keystore ?? MemoryKeystore(unplanned: true),
            accounts: accounts,
            services: services + (stores.map { [Provided($0, as: (any LocalStores).self)] } ?? []))
        world.end = { [self] status in state.withLock { $0.ended.append(status) } }
        return CommandContext(
            tool: tool, io: io, format: format, configuration: try RaxxConfiguration(environment: environment),
            requirement: requirement, world: world, quiet: quiet, noPager: noPager, errorFormat: errorFormat)
    }

    /// Parses `arguments` as `Command` (as its tool does) and runs it in this world; answers its exit status.
    public func run<Command: RaxxCommand>(_ command: Command.Type, _ arguments: [String] = []) async throws -> RaxxCore.ExitStatus {
        let parsed = try Command.parse(CommandLineWords.forParser(arguments))
        let format = parsed.global.resolvedFormat(stdoutIsTTY: stdoutIsTTY)
        let errorFormat = parsed.global.request.errorFormat(errorsAsJSON: try RaxxConfiguration(environment: environment).errorsAsJSON)
        let context = try self.context(
            tool: Command.tool, requirement: parsed.requirement, format: format, quiet: parsed.global.quiet,
            noPager: parsed.global.noPager, errorFormat: errorFormat)
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
final class StringSource: InputSource, Sendable {
    let bytes: [UInt8]
    let unplanned: Bool
    private let offset = Mutex(0)

    init(_ text: String) { bytes = Array(text.utf8); unplanned = false }
    init(unplanned: Bool) { bytes = []; self.unplanned = unplanned }

    func readAll() throws(RaxxError) -> [UInt8] {
        if unplanned { recordUnplanned("Unplanned read of standard input") }
        return bytes
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RaxxError) -> Int {
        if unplanned { recordUnplanned("Unplanned read of standard input") }
        let room = buffer.count, total = bytes.count
        let (start, n): (Int, Int) = offset.withLock { offset in
            let n = min(room, total - offset, 7 + offset % 13)
            guard n > 0 else { return (offset, 0) }
            defer { offset += n }
            return (offset, n)
        }
        guard n > 0 else { return 0 }
        // Outside the lock: `bytes` never changes, and this range is this read's alone.
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + start, byteCount: n) }
        return n
    }
}

/// A PIN (and an emailed code) "typed" at the prompt.
struct FixedPINEntry: PINEntry {
    let pin: @Sendable () -> String?
    var code: @Sendable () -> String? = { nil }
    /// The answer "typed" at a yes/no question; nil: none was planned.
    var answer: @Sendable () -> Bool? = { nil }
    var asked: @Sendable (String) -> Void = { _ in }

    func confirm(_ question: String) -> Bool? {
        asked(question)
        guard let answer = answer() else {
            recordUnplanned("Unplanned question: \(question)")
            return nil
        }
        return answer
    }

    func readCode(from source: PINSource, prompt: String) throws(RaxxError) -> String {
        guard let code = code() else {
            recordUnplanned("Unplanned code prompt: \(prompt)")
            throw RaxxError.usage("No code was planned.")
        }
        return code
    }

    func read(from source: PINSource, prompt: String, confirm: Bool) throws(RaxxError) -> SecretBytes {
        guard let pin = pin() else {
            recordUnplanned("Unplanned PIN prompt: \(prompt)")
            throw RaxxError.usage("No PIN was planned.")
        }
        return SecretBytes(copying: Array(pin.utf8))
    }
}

/// The in-memory doubles' clock of changes: each keystore save, adoption or confirmation takes
/// the next tick, so that the marker and the keystore compare as their files would.
enum MemoryChanges {
    private static let ticks = Atomic<Int>(0)
    static func next() -> ChangeStamp { ChangeStamp(seconds: ticks.add(1, ordering: .relaxed).newValue, nanoseconds: 0) }
}

/// `LocalAccounts` in memory: the account kept, and those forgotten. An account given at start
/// was never confirmed against the keystore (as on a device whose marker predates its keystore).
public final class MemoryLocalAccounts: LocalAccounts, Sendable {
    private let state: Mutex<State>

    private struct State {
        var kept: String?
        var stamp = ChangeStamp(seconds: .min, nanoseconds: 0)
        var gone: [String] = []
    }

    public init(current: String? = nil) { state = Mutex(State(kept: current)) }

    /// The accounts forgotten, in order.
    public var forgotten: [String] { state.withLock { $0.gone } }

    public func marked() throws(RaxxError) -> (account: String, at: ChangeStamp)? {
        state.withLock { state in state.kept.map { ($0, state.stamp) } }
    }
    public func confirm() { state.withLock { $0.stamp = MemoryChanges.next() } }
    public func adopt(_ accountID: String, sessionKeptFromBefore: Bool) throws(RaxxError) {
        state.withLock { state in
            state.kept = accountID
            state.stamp = MemoryChanges.next()
        }
    }
    public func forget(_ accountID: String) throws(RaxxError) {
        state.withLock { state in
            state.gone.append(accountID)
            if state.kept == accountID { state.kept = nil }
        }
    }
}

/// A keystore in memory, with an in-process lock.
public final class MemoryKeystore: KeystoreAccess, Sendable {
    private let state: Mutex<State>
    private let unplanned: Bool
    /// How many times it was saved.
    public var saves: Int { state.withLock { $0.saves } }
    /// How many times it was read (unsealed, for the file).
    public var loads: Int { state.withLock { $0.loads } }

    private struct State {
        var contents: KeystoreContents?
        var changedAt: ChangeStamp? = MemoryChanges.next()
        var saves = 0
        var loads = 0
        var whileWaitingForTheLock: (@Sendable () -> Void)?
    }

    public init(_ contents: KeystoreContents = KeystoreContents()) {
        state = Mutex(State(contents: contents))
        unplanned = false
    }

    init(unplanned: Bool) {
        self.unplanned = unplanned
        state = Mutex(State(contents: KeystoreContents()))
    }

    /// Unique per keystore: renewals are shared by location within a process.
    public let location = "memory:keystore/" + UUID().uuidString

    public var changedAt: ChangeStamp? { state.withLock { $0.changedAt } }

    /// What it holds now (nil once destroyed).
    public var current: KeystoreContents? { state.withLock { $0.contents } }

    public func load() throws(RaxxError) -> KeystoreContents {
        if unplanned { recordUnplanned("Unplanned keystore read") }
        return state.withLock { state in
            state.loads += 1
            return state.contents ?? KeystoreContents()
        }
    }

    public func save(_ contents: KeystoreContents) throws(RaxxError) {
        if unplanned { recordUnplanned("Unplanned keystore write") }
        state.withLock { state in
            state.contents = contents
            state.changedAt = MemoryChanges.next()
            state.saves += 1
        }
    }

    public func destroy() throws(RaxxError) {
        if unplanned { recordUnplanned("Unplanned keystore removal") }
        state.withLock { state in
            state.contents = nil
            state.changedAt = nil
        }
    }

    /// Runs when the lock is taken, before the body: another process's doing while this one waited.
    public var whileWaitingForTheLock: (@Sendable () -> Void)? {
        get { state.withLock { $0.whileWaitingForTheLock } }
        set { state.withLock { $0.whileWaitingForTheLock = newValue } }
    }

    public func withLock<T>(_ body: () async throws -> T) async throws -> T {
        whileWaitingForTheLock?()
        return try await body()
    }
}

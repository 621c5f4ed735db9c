import Foundation
import OpenAPIRuntime
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxSecrets
import RaxxVault
import RaxxWire

/// Everything a command's logic touches: its streams and output format, its configuration, and
/// the world outside (clock, ids, terminal, Raptor, keystore and the tool's stores). A command's
/// `run(_:)` reaches the world only through here: `run()` builds the live context, tests their own.
public struct CommandContext: Sendable {
    public let tool: String
    public let io: CommandIO
    public let format: OutputFormat
    public let configuration: RaxxConfiguration
    public let requirement: ConnectivityRequirement
    public let world: World
    /// `--quiet` (for cron, which mails whatever a job prints): no progress lines and no notes
    /// (`say`); offline (69) and busy or rate-limited (75) failures end with their status and print
    /// nothing. Warnings (`warn`) and every other failure still print: they need a person.
    public let quiet: Bool
    /// `--no-pager`: long tables are written as they are.
    public let noPager: Bool
    /// How errors are written on stderr: JSON only when it was asked for (`OutputRequest.errorFormat`).
    public let errorFormat: OutputFormat

    /// `errorFormat`: how errors are written (`OutputRequest.errorFormat`); `format` when not given.
    public init(
        tool: String, io: CommandIO, format: OutputFormat, configuration: RaxxConfiguration,
        requirement: ConnectivityRequirement, world: World, quiet: Bool = false, noPager: Bool = false,
        errorFormat: OutputFormat? = nil
    ) {
        self.tool = tool
        self.io = io
        self.format = format
        self.errorFormat = errorFormat ?? format
        self.configuration = configuration
        self.requirement = requirement
        self.world = world
        self.quiet = quiet
        self.noPager = noPager
    }

    /// The live context for `tool`, from the process's streams and environment, with the output
    /// the global options asked for.
    public static func live(
        tool: String, requirement: ConnectivityRequirement, output: OutputRequest,
        io: CommandIO = .standard(),
        environment: EnvironmentVariables = .process,
        services: (RaxxConfiguration) -> [Provided] = { _ in [] }
    ) throws(RaxxError) -> CommandContext {
        let configuration = try RaxxConfiguration(environment: environment)
        return CommandContext(
            tool: tool, io: io, format: output.resolved(stdoutIsTTY: io.stdoutIsTTY),
            configuration: configuration, requirement: requirement,
            world: .live(tool: tool, configuration: configuration, services: services(configuration)), quiet: output.quiet,
            noPager: output.noPager, errorFormat: output.errorFormat(errorsAsJSON: configuration.errorsAsJSON))
    }

    // MARK: The world

    /// Wall-clock time.
    public var clock: @Sendable () -> Date { world.now }

    /// This device's keystore.
    public var keystore: any KeystoreAccess { world.keystore }

    /// The origin of the configured server: whose session and passkey this command may use.
    public var origin: String { configuration.endpoint.origin }

    /// This server's live session as the keystore holds it (offline), or exit 4: "Not signed in to
    /// ORIGIN" when there is none, "Sign in again" when it ended.
    public func storedSession() throws(RaxxError) -> StoredSession {
        guard let session = try keystore.load()[origin].session else { throw SessionTokens.notSignedIn(origin) }
        guard session.sessionExpiresAt > clock() else { throw RaxxError.signInRequired }
        return session
    }

    /// The account whose data this device keeps and shows for this server: the one signed in
    /// (adopted as this device's account when another was before it), or, signed out, the last
    /// one signed in here; nil when none ever was.
    ///
    /// The keystore is unsealed only when it changed since the marker naming the account was
    /// written or last confirmed: a sign-in writes the keystore and then the marker, so a marker
    /// newer than the keystore names the account it holds. An offline read then costs two `stat`s
    /// and a small file, not an unsealing. When the keystore is newer (a renewal, a sign-in
    /// elsewhere, a sign-in cut short before its marker), it is read, and the marker adopts its
    /// account or is confirmed.
    public func localAccount() throws(RaxxError) -> String? {
        let sealedAt = keystore.changedAt
        let marked = try world.accounts.marked()
        if let marked, sealedAt.map({ marked.at > $0 }) ?? true { return marked.account }
        let signedIn = try keystore.load()[origin].session?.accountID
        if let signedIn, signedIn != marked?.account {
            try world.accounts.adopt(signedIn, sessionKeptFromBefore: true)
        } else if marked != nil, keystore.changedAt == sealedAt {
            world.accounts.confirm()
        }
        return signedIn ?? marked?.account
    }

    /// `session` was just started here: its account's data is the one kept and shown from now on.
    public func signedIn(_ session: StoredSession) throws(RaxxError) {
        try world.accounts.adopt(session.accountID, sessionKeptFromBefore: false)
    }

    /// The server says this device's account no longer exists (it was erased): everything the
    /// device keeps of it goes, its passkey and session as well as its local data. Answers whether
    /// all of it went.
    public func forgetClosedAccount() async -> Bool {
        do {
            let account = try? localAccount()
            try await keystore.withLock {
                var contents = try keystore.load()
                contents[origin] = ServerCredentials()
                try keystore.save(contents)
            }
            if let account { try world.accounts.forget(account) }
            return true
        } catch {
            return false
        }
    }

    /// A service only some tools have (the cache and journal stores), by type.
    public func service<Service>(_ type: Service.Type = Service.self) throws(RaxxError) -> Service {
        for service in world.services {
            if let found = service.value(as: Service.self) { return found }
        }
        throw RaxxError(code: .internal, message: "\(tool) has no \(Service.self).")
    }

    /// The Raptor API without a session. Offline-capable commands may not have one: one that asks
    /// is a programming error, reported as such instead of touching the network.
    public func api() throws(RaxxError) -> any APIProtocol {
        try checkNetworkAllowed()
        return world.raptor.api(middlewares: [])
    }

    /// The session's tokens, renewed silently while the session lives.
    public func sessionTokens() throws(RaxxError) -> SessionTokens {
        SessionTokens(keystore: keystore, client: try api(), origin: configuration.endpoint.origin, clock: clock)
    }

    /// The Raptor API that signs every request with the session's access token. This is where a
    /// verb that needs the session says so: offline it is refused here (exit 69), and without this
    /// server's live session in the keystore too (exit 4: `storedSession`), before anything is
    /// sent or written. A verb checks its input first, so bad input is named whether or not it is
    /// signed in.
    public func signedInAPI() throws(RaxxError) -> any APIProtocol {
        try checkNetworkAllowed()
        _ = try storedSession()
        return try bearerAPI()
    }

    /// The signed-in API for answers read as bytes (the sync pages), when the world has one.
    public func signedInRaw() throws(RaxxError) -> RawRaptor? {
        try checkNetworkAllowed()
        _ = try storedSession()
        return world.raptor.raw(middlewares: [BearerTokenMiddleware(tokens: try sessionTokens())])
    }

    /// The API with the session's bearer token on every request, whether or not there is a
    /// session yet (the ceremonies sign in first).
    private func bearerAPI() throws(RaxxError) -> any APIProtocol {
        world.raptor.api(middlewares: [BearerTokenMiddleware(tokens: try sessionTokens())])
    }

    /// The passkey ceremonies with this device's keystore.
    public func ceremonies() throws(RaxxError) -> Ceremonies {
        try checkNetworkAllowed()
        return Ceremonies(keystore: keystore, client: try api(), authenticatedClient: try bearerAPI(), endpoint: configuration.endpoint, clock: clock)
    }

    /// A PIN prompt for the ceremonies, from the terminal or `--pin-fd`. On the terminal a wrong
    /// PIN is said (with the attempts left) and asked again, up to the lockout; from `--pin-fd`
    /// it ends the command.
    public func pinPrompt(_ source: PINSource) -> Ceremonies.PINPrompt {
        let entry = world.pinEntry
        let ask: @Sendable (Bool) throws -> SecretBytes = { confirm in
            try entry.read(
                from: source,
                prompt: confirm ? "Choose a PIN for this device's passkey (\(PIN.minimumNewLength) to \(PIN.maximumLength) characters): " : "PIN: ",
                confirm: confirm)
        }
        guard source == .terminal else { return Ceremonies.PINPrompt(ask) }
        let warn: @Sendable (String) -> Void = { [self] in self.warn($0) }
        return Ceremonies.PINPrompt(
            wrong: { refusal in
                warn([refusal.message, refusal.hint].compactMap { $0 }.joined(separator: " "))
            }, ask)
    }

    /// `pinPrompt(_:)`, asked at most once: later asks answer a copy of the PIN given first (a
    /// batch's step-ups confirmed with one PIN). A wrong PIN is forgotten, so that the one asked
    /// again is kept instead. The PIN is wiped once the prompt is released.
    public func pinPromptAskingOnce(_ source: PINSource) -> Ceremonies.PINPrompt {
        let prompt = pinPrompt(source)
        let remembered = RememberedPIN()
        let ask = prompt.ask
        var forgetting: (@Sendable (RaxxError) -> Void)? = nil
        if let wrong = prompt.wrong {
            forgetting = { refusal in
                remembered.forget()
                wrong(refusal)
            }
        }
        return Ceremonies.PINPrompt(wrong: forgetting) { confirm in try remembered.copy { try ask(confirm) } }
    }

    /// Where the code can be asked again after a slip: on the terminal (a file descriptor has one
    /// line to give); nil elsewhere.
    public func codeRetry(_ source: PINSource) -> Ceremonies.CodeRetry? {
        guard source == .terminal else { return nil }
        let entry = world.pinEntry
        let say: @Sendable (String) -> Void = { [self] in self.say($0) }
        return { refusal, _ in
            say(refusal.message + (refusal.hint.map { " " + $0 } ?? ""))
            return try entry.readCode(from: source, prompt: "Code from the email: ")
        }
    }

    /// A prompt for the one-time code a registration's server emailed, from the terminal or `--code-fd`.
    public func codePrompt(_ source: PINSource) -> Ceremonies.CodePrompt {
        let entry = world.pinEntry
        let say: @Sendable (String) -> Void = { [self] in self.say($0) }
        return { email, digits in
            say("A one-time code (\(digits) digits) was emailed to \(email); it works once, for 10 minutes.")
            return try entry.readCode(from: source, prompt: "Code from the email: ")
        }
    }

    private func checkNetworkAllowed() throws(RaxxError) {
        guard requirement != .offlineCapable else {
            throw RaxxError(code: .internal, message: "An offline-capable command tried to use the network.")
        }
    }

    // MARK: Output

    /// Writes records to stdout: JSON Lines, or one text table.
    public func emit<Record: Encodable>(_ records: [Record], columns: [Table.Column], row: (Record) -> [String]) throws(RaxxError) {
        try emit(records, columns: columns, row: row) { record throws(RaxxError) in
            do {
                return try JSONLines.line(record)
            } catch {
                throw RaxxError(code: .internal, message: "Could not encode the output: \(error)")
            }
        }
    }

    /// As `emit(_:columns:row:)`, for records that write their own JSON lines (the offline reads').
    public func emit<Record: Encodable & JSONLineWritable>(_ records: [Record], columns: [Table.Column], row: (Record) -> [String]) throws(RaxxError) {
        try emit(records, columns: columns, row: row) { record throws(RaxxError) in JSONLines.line(written: record) }
    }

    private func emit<Record>(
        _ records: [Record], columns: [Table.Column], row: (Record) -> [String],
        line: (Record) throws(RaxxError) -> String
    ) throws(RaxxError) {
        switch format {
        case .json:
            for record in records { io.stdout.write(try line(record) + "\n") }
        case .text:
            writeTable(Table(columns: columns, rows: records.map(row)))
        }
        io.stdout.flush()
    }

    /// One record for a person: FIELD/VALUE rows, a field a line (a detail view reads as a record,
    /// not as a table one row high and wider than the terminal).
    public func writeRecord(_ fields: [(field: String, value: String)]) {
        writeTable(Table(columns: [.init("Field"), .init("Value", elidable: true)], rows: fields.map { [$0.field, $0.value] }))
        io.stdout.flush()
    }

    /// A text table on stdout: statuses in colour on a terminal (not with `NO_COLOR`, never into a
    /// pipe), and one longer than the terminal through the pager (`$PAGER`, `less -FRX`; not with
    /// `--no-pager`, never into a pipe). Every table of every tool goes through here, so one rule
    /// holds for all: no rows, no header (a cron job mails nothing, a pipe reads nothing), and a
    /// person at a terminal is told.
    public func writeTable(_ table: Table) {
        guard !table.rows.isEmpty else {
            if io.stderrIsTTY { say("Nothing to show.") }
            return
        }
        // On a terminal the table fits its width (gh's way: the least needed columns go first).
        writePaged(table.render(colour: io.stdoutIsTTY && configuration.colour, width: io.stdoutIsTTY ? io.terminalColumns : nil))
    }

    /// Whether text for stdout goes through the pager when longer than the terminal: on a
    /// terminal, with a pager (`$PAGER`, `less -FRX`), not with `--no-pager`.
    public var pagesLongText: Bool {
        io.stdoutIsTTY && !noPager && configuration.pagerCommand != nil && io.terminalRows != nil && io.page != nil
    }

    /// `text` on stdout, through the pager when it is longer than the terminal (`pagesLongText`).
    public func writePaged(_ text: String) {
        if pagesLongText, let command = configuration.pagerCommand, let rows = io.terminalRows, let page = io.page,
            text.utf8.reduce(0, { $1 == 10 ? $0 + 1 : $0 }) >= rows
        {
            io.stdout.flush()
            if page(text, command) { return }
        }
        io.stdout.write(text)
    }

    /// A progress line on stderr for long work, when stderr is a terminal (and `enabled`); else one
    /// that writes nothing, so callers need no conditions of their own.
    public func progressLine(_ label: String, unit: String = "", total: Int? = nil, enabled: Bool = true) -> ProgressLine {
        let io = self.io
        var write: (@Sendable (String) -> Void)? = nil
        if io.stderrIsTTY && enabled && !quiet {
            write = { text in
                io.stderr.write(text)
                io.stderr.flush()
            }
        }
        return ProgressLine(label: label, unit: unit, total: total, clock: world.monotonic, write: write)
    }

    /// A note for a person, on stderr (without control characters: it may quote a server); none
    /// with `--quiet`.
    public func say(_ message: String) {
        guard !quiet else { return }
        warn(message)
    }

    /// While the answer is kept, an interrupt (Ctrl-C at a prompt, where the command is waiting
    /// on the person) ends the command with `error`, reported as every error is, instead of
    /// dying without a word: for a step whose state a person must hear (`raxx-dsr apply`).
    public func endOnInterrupt(with error: RaxxError) -> any Sendable {
        let reporter = Reporter(tool: tool, format: errorFormat, quiet: quiet), io = io, world = world
        return world.onInterrupt { _ in
            ControllingTerminal.echo()  // a hidden prompt's, given back
            io.stderr.write("\n")
            world.end(reporter.report(error, to: io).rawValue)
        }
    }

    /// `date` as a sentence says it: local (`TZ`), compact, with how long ago or until when
    /// within a day (`PeopleText.moment`). Every time a person reads is one of these or `peopleTime`.
    public func peopleMoment(_ date: Date) -> String {
        PeopleText.moment(date, now: clock(), timeZone: configuration.timeZone)
    }

    /// `date` as a text table shows it: local (`TZ`), compact, relative when recent.
    public func peopleTime(_ date: Date) -> String {
        PeopleText.time(date, now: clock(), timeZone: configuration.timeZone)
    }

    /// A warning that needs a person, on stderr even with `--quiet`.
    public func warn(_ message: String) {
        io.stderr.write(TerminalText.printable(message, keepingNewlines: true) + "\n")
        io.stderr.flush()
    }
}

/// The PIN `pinPromptAskingOnce` gave first, kept (in `SecretBytes`, wiped on release) for the
/// asks after it.
private final class RememberedPIN: @unchecked Sendable {
    private let lock = NSLock()
    private var pin: SecretBytes?

    /// A copy of the PIN, asked for with `ask` the first time.
    func copy(_ ask: () throws -> SecretBytes) throws -> SecretBytes {
        lock.lock()
        defer { lock.unlock() }
        if pin == nil { pin = try ask() }
        return pin!.withUnsafeBytes { SecretBytes(copying: $0) }
    }

    /// Wipes the PIN kept: the next ask asks again.
    func forget() {
        lock.lock()
        defer { lock.unlock() }
        pin?.wipe()
        pin = nil
    }
}

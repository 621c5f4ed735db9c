import ArgumentParser
import Foundation
import Hummingbird
import Logging
import RaxxArguments
import RaxxCore
import RaxxSandbox

extension RaxxSandboxTool {
    public struct Serve: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(
            abstract: "Serve the Raptor API until SIGINT or SIGTERM.",
            discussion: """
                The first line on stdout is "listening on http://HOST:PORT", so a script can start the \
                sandbox on port 0 and read the port it got. Logs go to stderr; a failed request is \
                logged by operation, status and problem code, never with its headers or body.

                A request body may carry at most 1 MiB (1048576 bytes); a larger one is refused with \
                413 payload_too_large. Used and expired challenges, spent and expired step-up grants, and \
                sessions that ended more than a day ago are deleted as new ones are made.

                Email goes where the platform would send it, one RFC 5322 message per email, into a \
                Maildir (--mail-dir; by default a mail folder beside the database, named on stderr at \
                start), 0700, each message 0600: the one-time code every registration needs (a new \
                account, a seeded account's first passkey, a new device, a recovery), a passkey added or \
                removed, a session signed out because its spent renewal token was presented again, and \
                each staff action on a data-subject request (its extension with the reason, its completion).

                Registration codes are budgeted per address, not per code: an address may be tried with \
                --code-guesses wrong codes in any 10 minutes and mailed --code-mails codes an hour, and a \
                client may ask --code-asks-per-client times a minute and present --code-tries-per-client \
                codes a minute; past a budget the answer is 429 \
                rate_limited with Retry-After. A code stays good until it expires or is used: another ask \
                mails the same code again, never a new one that would void it. Codes are kept as keyed \
                hashes under a key held in memory, so a restart voids the codes outstanding.

                GET /api/events answers alerts: fills, rejections, security alerts, and a session's \
                coming end, written once per session by a scan every --session-scan-interval for the \
                sessions within 15 minutes of their end. A long poll (wait) ends as soon as an alert \
                for its account commits, when its time is up, or at once when the server shuts down.
                """
        )

        @Option(help: ArgumentHelp("The address to listen on. Anything but loopback exposes the sandbox to the network.", valueName: "address"))
        var host = "127.0.0.1"

        @Option(help: ArgumentHelp("The port to listen on; 0 picks a free one.", valueName: "port"))
        var port = 8080

        @Option(help: ArgumentHelp("The SQLite database file, or :memory: for a database that ends with the process.", valueName: "path"))
        var db = ":memory:"

        @Option(
            name: .customLong("mail-dir"),
            help: ArgumentHelp(
                "The Maildir the platform's email goes to (one-time codes, notices); default: mail beside the database, or a new temporary folder.",
                valueName: "dir"))
        var mailDir: String?

        @Option(help: ArgumentHelp("The WebAuthn origin clients must report (default: https:// and the relying party ID).", valueName: "origin"))
        var origin: String?

        @Option(
            name: .customLong("rp-id"),
            help: ArgumentHelp("The WebAuthn relying party ID (default: localhost on a loopback address, raxx.app otherwise).", valueName: "id"))
        var rpID: String?

        @Option(name: .customLong("token-ttl"), help: ArgumentHelp("How long an access token lives (e.g. 90s, 15m).", valueName: "duration"))
        var tokenTTL = RaxxDuration.minutes(15)

        @Option(name: .customLong("session-ttl"), help: ArgumentHelp("A session's maximum age, renewals included (e.g. 12h).", valueName: "duration"))
        var sessionTTL = RaxxDuration.hours(12)

        @Option(name: .customLong("step-up-notional"), help: ArgumentHelp("Orders with a larger notional need a step-up.", valueName: "amount"))
        var stepUpNotional = "10000"

        @Option(name: .customLong("market-seed"), help: ArgumentHelp("The simulated market's seed.", valueName: "seed"))
        var marketSeed: UInt64 = 42

        @Option(
            name: .customLong("change-retention"),
            help: ArgumentHelp("How long the change log keeps tombstones; older sync cursors get a reset.", valueName: "duration"))
        var changeRetention = RaxxDuration.hours(7 * 24)

        @Option(
            name: .customLong("session-scan-interval"),
            help: ArgumentHelp(
                "How often to look for sessions within 15 minutes of their end, to alert them (e.g. 30s).",
                valueName: "duration"))
        var sessionScanInterval = RaxxDuration.seconds(30)

        @Option(
            name: .customLong("cancel-after-scan-interval"),
            help: ArgumentHelp(
                "How often to fire the dead man's switches whose deadline passed or whose session ended (e.g. 1s).",
                valueName: "duration"))
        var cancelAfterScanInterval = RaxxDuration.seconds(1)

        @Option(
            name: .customLong("fault-lose-order-replies"),
            help: ArgumentHelp("Fault injection for tests: lose the replies to this many accepted orders (the orders stand).", valueName: "n"))
        var loseOrderReplies = 0

        @Option(
            name: .customLong("erasure-chunk-rows"),
            help: ArgumentHelp("The most rows one chunk of an erasure's history takes (one transaction each).", valueName: "count"))
        var erasureChunkRows = 20_000

        @Option(
            name: .customLong("erasure-chunk-time"),
            help: ArgumentHelp(
                """
                About how long one chunk of an erasure may hold the write lock; chunks are sized to it, and one ends early when another \
                write waits for the lock.
                """,
                valueName: "duration"))
        var erasureChunkTime = SandboxConfiguration.defaultErasureChunkBudget

        @Option(
            name: .customLong("erasure-chunk-pause"),
            help: ArgumentHelp("A pause between an erasure's chunks, for tests that crash one midway (e.g. 200ms).", valueName: "duration"))
        var erasureChunkPause = RaxxDuration(milliseconds: 0)

        @Option(
            name: .customLong("erasure-yield"),
            help: ArgumentHelp(
                "While other requests keep coming, the pause after each of an erasure's chunks, so that other accounts' orders get the CPU (none by default).",
                valueName: "duration"))
        var erasureYield = SandboxConfiguration.defaultErasureYield

        @Option(
            name: .customLong("code-guesses"),
            help: ArgumentHelp(
                """
                Wrong registration codes one address may be tried with in any 10 minutes, however many codes were asked for; then every \
                try is refused (429 rate_limited) until the oldest leaves the window.
                """,
                valueName: "count"))
        var codeGuesses = RegistrationCodeLimits().guessesPerAddress

        @Option(
            name: .customLong("code-mails"),
            help: ArgumentHelp("Registration codes mailed to one address in any hour (an ask mails the live code again).", valueName: "count"))
        var codeMails = RegistrationCodeLimits().mailsPerAddress

        @Option(
            name: .customLong("code-asks-per-client"),
            help: ArgumentHelp("Asks for a registration code one client (IP address) may make in any minute.", valueName: "count"))
        var codeAsksPerClient = RegistrationCodeLimits().asksPerClient

        @Option(
            name: .customLong("code-tries-per-client"),
            help: ArgumentHelp("Registration codes one client (IP address) may present in any minute, whatever the addresses.", valueName: "count"))
        var codeTriesPerClient = RegistrationCodeLimits().guessesPerClient

        @Option(
            name: .customLong("apns-url"),
            help: ArgumentHelp("Push each new alert to its account's opted-in devices at this APNs endpoint (https).", valueName: "url"))
        var apnsURL: String?

        @Option(name: .customLong("apns-key-file"), help: ArgumentHelp("The provider's .p8 signing key (mode 0600).", valueName: "path"))
        var apnsKeyFile: String?

        @Option(name: .customLong("apns-key-id"), help: ArgumentHelp("The signing key's ID (the provider token's kid).", valueName: "id"))
        var apnsKeyID: String?

        @Option(name: .customLong("apns-team-id"), help: ArgumentHelp("The team ID (the provider token's iss).", valueName: "id"))
        var apnsTeamID: String?

        @Option(name: .customLong("apns-topic"), help: ArgumentHelp("The app's bundle ID, sent as apns-topic.", valueName: "topic"))
        var apnsTopic: String?

        @Option(name: .customLong("apns-ca-file"), help: ArgumentHelp("Trust this CA for the APNs endpoint (a local one).", valueName: "path"))
        var apnsCAFile: String?

        @Option(
            name: .customLong("apns-state-dir"),
            help: ArgumentHelp("Where provider tokens are shared with other dispatchers (default: the database's folder).", valueName: "path"))
        var apnsStateDir: String?

        @Option(name: .customLong("log-level"), help: ArgumentHelp("How much to log on stderr.", valueName: "level"))
        var logLevel = LogLevel.warning

        public init() {}

        public func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
            guard Decimal(string: stepUpNotional) != nil else { throw ValidationError("--step-up-notional must be a number.") }
            guard tokenTTL.milliseconds > 0, sessionTTL.milliseconds > 0, sessionScanInterval.milliseconds > 0,
                cancelAfterScanInterval.milliseconds > 0
            else {
                throw ValidationError("Durations must be positive.")
            }
            let apns = [apnsURL, apnsKeyFile, apnsKeyID, apnsTeamID, apnsTopic]
            guard apns.allSatisfy({ $0 == nil }) || apns.allSatisfy({ $0 != nil }) else {
                throw ValidationError("Push needs all of --apns-url, --apns-key-file, --apns-key-id, --apns-team-id and --apns-topic.")
            }
            if let apnsURL, !apnsURL.lowercased().hasPrefix("https://") { throw ValidationError("--apns-url must be an https URL.") }
            guard codeGuesses > 0, codeMails > 0, codeAsksPerClient > 0, codeTriesPerClient > 0 else {
                throw ValidationError("--code-guesses, --code-mails, --code-asks-per-client and --code-tries-per-client must be at least 1.")
            }
        }

        public func run() async throws {
            let level = Logger.Level(rawValue: logLevel.rawValue) ?? .warning
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            if !["127.0.0.1", "::1", "localhost"].contains(host) {
                printError("raxx-sandbox: warning: listening on \(host), not loopback: the sandbox is reachable from the network.")
            }
            var configuration = SandboxConfiguration(
                host: host, port: port, databasePath: db, origin: origin, relyingPartyID: rpID,
                accessTokenTTL: tokenTTL, sessionTTL: sessionTTL,
                stepUpNotional: Decimal(string: stepUpNotional) ?? 10_000, marketSeed: marketSeed,
                changeRetention: changeRetention
            )
            configuration.loseOrderReplies = loseOrderReplies
            configuration.sessionScanInterval = sessionScanInterval
            configuration.erasureChunkRows = max(1, erasureChunkRows)
            configuration.erasureChunkPause = .milliseconds(erasureChunkPause.milliseconds)
            configuration.erasureYield = .milliseconds(erasureYield.milliseconds)
            configuration.erasureChunkBudget = .milliseconds(max(1, erasureChunkTime.milliseconds))
            configuration.cancelAfterScanInterval = cancelAfterScanInterval
            configuration.codeLimits = RegistrationCodeLimits(
                guessesPerAddress: codeGuesses, mailsPerAddress: codeMails,
                asksPerClient: codeAsksPerClient, guessesPerClient: codeTriesPerClient)
            let database: SandboxDatabase
            do {
                database = try SandboxDatabase(path: db, mailDirectory: mailDir)
            } catch {
                printError("raxx-sandbox: cannot open the database \(db): \(error)")
                throw ExitCode(ExitStatus.failure.rawValue)
            }
            do {
                try database.mailer.prepare()
            } catch {
                printError("raxx-sandbox: \(error)")
                throw ExitCode(ExitStatus.failure.rawValue)
            }
            printError("raxx-sandbox: email goes to the Maildir \(database.mailer.directory)")
            var logger = Logger(label: "raxx-sandbox")
            logger.logLevel = level
            var pushSender: (any EventPushSending)?
            if let apnsURL, let apnsKeyFile, let apnsKeyID, let apnsTeamID, let apnsTopic {
                let state =
                    apnsStateDir.map { URL(fileURLWithPath: $0) }
                    ?? (db == ":memory:"
                        ? FileManager.default.temporaryDirectory.appendingPathComponent("raxx-sandbox")
                        : URL(fileURLWithPath: db).deletingLastPathComponent())
                do {
                    pushSender = try await APNsEventSender.open(
                        url: apnsURL, keyFile: apnsKeyFile, keyID: apnsKeyID, teamID: apnsTeamID,
                        topic: apnsTopic, caFile: apnsCAFile, stateDirectory: state)
                } catch {
                    printError("raxx-sandbox: push: \(error.message)" + (error.hint.map { " \($0)" } ?? ""))
                    throw ExitCode(error.status.rawValue)
                }
            }
            let host = self.host
            let app = try buildApplication(configuration: configuration, database: database, logger: logger, pushSender: pushSender) { port in
                let shown = host.contains(":") ? "[\(host)]" : host
                printLine("listening on http://\(shown):\(port)")
            }
            try await app.runService()
        }
    }
}

/// The sandbox's log levels (swift-log's).
enum LogLevel: String, CaseIterable, ExpressibleByArgument {
    case trace, debug, info, notice, warning, error, critical
}

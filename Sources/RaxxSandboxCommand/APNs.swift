import ArgumentParser
import Foundation
import Logging
import RaxxAPNsEndpoint
import RaxxCore
import ServiceLifecycle

extension RaxxSandboxTool {
    public struct APNs: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(
            commandName: "apns",
            abstract: "Serve a local APNs endpoint (Apple's HTTP/2 provider API) until SIGINT or SIGTERM.",
            discussion: """
                An HTTP/2 server over TLS (ALPN h2) for end-to-end tests and benchmarks of push clients. \
                At start it makes a certificate authority and a server certificate for 127.0.0.1, ::1 and \
                localhost, keeps their keys in memory only, and writes the CA certificate to DIR/ca.pem \
                (mode 0644) for clients to trust. Then the first line on stdout is \
                "listening on https://HOST:PORT".

                Requests are checked as APNs checks them, and refused with Apple's status and reason \
                ({"reason":"…"}): POST only (405 MethodNotAllowed); the path /3/device/TOKEN (404 \
                BadPath; 400 MissingDeviceToken or BadDeviceToken); repeated header fields (400 \
                DuplicateHeaders); authorization: bearer JWT, an ES256 token whose kid names a key given \
                with --key-id and --public-key, whose iss is --team-id and whose iat is at most an hour old \
                and not in the future (403 MissingProviderToken, InvalidProviderToken, \
                ExpiredProviderToken); a key's token may change at most every 20 minutes (429 \
                TooManyProviderTokenUpdates), except right after ExpiredProviderToken; a connection keeps \
                its first push's key (403 UnrelatedKeyIdInToken); apns-topic (400 MissingTopic, BadTopic, \
                and DeviceTokenNotForTopic for a topic other than --topic or its push-type suffixes); \
                apns-push-type (400 InvalidPushType); apns-priority 10, 5 or 1 (400 BadPriority); \
                apns-expiration, whole seconds (400 BadExpirationDate); apns-collapse-id of at most 64 \
                bytes (400 BadCollapseId); apns-id, a UUID (400 BadMessageId; made here when absent); the \
                payload (400 PayloadEmpty when empty or not a JSON object — Apple documents no reason for \
                the latter; 413 PayloadTooLarge above 4096 bytes). An accepted push answers 200 with \
                apns-id and apns-unique-id. Each distinct provider token is verified once.

                Scripted failures: tokens listed in --unregistered answer 410 Unregistered with their \
                timestamp (or now); --fail-rate R makes that share of otherwise valid pushes answer 429 \
                TooManyRequests, 500 InternalServerError or 503 ServiceUnavailable, by dice seeded with \
                --seed; --goaway-after N sends GOAWAY on each connection after its Nth stream, naming \
                that stream as the last processed, refuses the streams above it unprocessed, and closes \
                the connection once the streams below are answered; --expire-provider-tokens-after N \
                answers ExpiredProviderToken to a token once N pushes were accepted under it.

                --log FILE appends one JSON line per request decided: for an accepted push, \
                {"event":"accepted", "status":200} with apns_id, unique_id, device_token, topic, push_type, \
                priority, expiration, collapse_id, payload, kid, iat, connection, stream and time; for a \
                refused one (failed scripted pushes included), {"event":"refused"} with status, reason, \
                timestamp (when there is one), apns_id, device_token, topic, kid, iat, connection, stream \
                and time. Lines are buffered (at most 64 KiB, written at least every 0.2 s) and flushed \
                when the endpoint stops.

                --make-key DIR makes a provider key for it and does nothing else: DIR/AuthKey_KEYID.p8 \
                (PKCS #8, mode 0600, what raxx-notify push --key-file reads) and DIR/AuthKey_KEYID.pub.pem \
                (for --public-key), and prints the key ID. A real key comes from Apple's developer \
                account (Certificates, Identifiers & Profiles, Keys), is downloaded once, and is never \
                committed.
                """
        )

        @Option(
            name: .customLong("make-key"),
            help: ArgumentHelp("Make a provider key in this folder (AuthKey_KEYID.p8 at 0600, and its .pub.pem), print its ID, and exit.", valueName: "dir"))
        var makeKey: String?

        @Option(help: ArgumentHelp("The address to listen on.", valueName: "address"))
        var host = "127.0.0.1"

        @Option(help: ArgumentHelp("The port to listen on; 0 picks a free one (Apple's are 443 and 2197).", valueName: "port"))
        var port = 2197

        @Option(name: .customLong("tls-dir"), help: ArgumentHelp("The folder to write the CA certificate to, as ca.pem.", valueName: "dir"))
        var tlsDirectory: String?

        @Option(
            name: .customLong("key-id"), help: ArgumentHelp("A provider key's ID (the JWT's kid); repeat with --public-key for more keys.", valueName: "id"))
        var keyIDs: [String] = []

        @Option(
            name: .customLong("public-key"),
            help: ArgumentHelp("The PEM public key (SubjectPublicKeyInfo, P-256) of the --key-id given in the same position.", valueName: "file"))
        var publicKeys: [String] = []

        @Option(name: .customLong("team-id"), help: ArgumentHelp("The team ID provider tokens must name (iss).", valueName: "id"))
        var teamID: String?

        @Option(help: ArgumentHelp("The app's topic (bundle ID); other topics answer DeviceTokenNotForTopic. Any topic when absent.", valueName: "topic"))
        var topic: String?

        @Option(name: .customLong("max-concurrent-streams"), help: ArgumentHelp("SETTINGS_MAX_CONCURRENT_STREAMS advertised to clients.", valueName: "n"))
        var maxConcurrentStreams = 1000

        @Option(
            help: ArgumentHelp(
                "A file of device tokens that answer 410 Unregistered: one hex token a line, optionally a space and a timestamp in milliseconds.",
                valueName: "file"))
        var unregistered: String?

        @Option(name: .customLong("fail-rate"), help: ArgumentHelp("The share (0 to 1) of otherwise valid pushes answered 429, 500 or 503.", valueName: "rate"))
        var failRate = 0.0

        @Option(help: ArgumentHelp("The seed of the failure dice, for repeatable runs.", valueName: "n"))
        var seed: UInt64 = 0

        @Option(name: .customLong("goaway-after"), help: ArgumentHelp("Send GOAWAY on a connection after this many streams.", valueName: "n"))
        var goAwayAfter: Int?

        @Option(
            name: .customLong("expire-provider-tokens-after"),
            help: ArgumentHelp("Answer ExpiredProviderToken to a provider token once this many pushes were accepted under it.", valueName: "n"))
        var expireProviderTokensAfter: Int?

        @Option(help: ArgumentHelp("Append one JSON line per request decided to this file.", valueName: "file"))
        var log: String?

        @Option(help: ArgumentHelp("Event loop threads (default: one per core).", valueName: "n"))
        var threads: Int?

        public init() {}

        public func validate() throws {
            if makeKey != nil {
                guard tlsDirectory == nil, teamID == nil, keyIDs.isEmpty, publicKeys.isEmpty else {
                    throw ValidationError("--make-key makes a key and exits: give it alone.")
                }
                return
            }
            guard tlsDirectory != nil else { throw ValidationError("Missing expected argument '--tls-dir <dir>'.") }
            guard teamID != nil else { throw ValidationError("Missing expected argument '--team-id <id>'.") }
            guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
            guard !keyIDs.isEmpty, keyIDs.count == publicKeys.count else {
                throw ValidationError("Give each --key-id with its --public-key (as many of one as of the other, at least one).")
            }
            guard teamID?.isEmpty == false else { throw ValidationError("--team-id must not be empty.") }
            guard (1...Int(Int32.max)).contains(maxConcurrentStreams) else { throw ValidationError("--max-concurrent-streams must be at least 1.") }
            guard (0...1).contains(failRate) else { throw ValidationError("--fail-rate must be between 0 and 1.") }
            guard (goAwayAfter ?? 1) >= 1 else { throw ValidationError("--goaway-after must be at least 1.") }
            guard (expireProviderTokensAfter ?? 1) >= 1 else { throw ValidationError("--expire-provider-tokens-after must be at least 1.") }
            guard (threads ?? 1) >= 1 else { throw ValidationError("--threads must be at least 1.") }
        }

        public func run() async throws {
            if let makeKey {
                do {
                    let key = try LocalProviderKey.make(in: makeKey)
                    printLine(key.keyID)
                    printError(
                        "raxx-sandbox: wrote \(key.privateKeyPath) (0600: the private key, for raxx-notify push --key-file) "
                            + "and \(key.publicKeyPath) (for --public-key); its key ID, \(key.keyID), is on stdout.")
                    return
                } catch {
                    printError("raxx-sandbox: \(error)")
                    throw ExitCode(ExitStatus.failure.rawValue)
                }
            }
            guard let tlsDirectory, let teamID else { throw ExitCode(ExitStatus.usage.rawValue) }  // validate() made sure
            var configuration = APNsEndpointConfiguration(tlsDirectory: tlsDirectory, teamID: teamID, keys: [:])
            configuration.host = host
            configuration.port = port
            configuration.topic = topic
            configuration.maxConcurrentStreams = maxConcurrentStreams
            configuration.failRate = failRate
            configuration.seed = seed
            configuration.goAwayAfter = goAwayAfter
            configuration.expireProviderTokensAfter = expireProviderTokensAfter
            configuration.logPath = log
            if let threads { configuration.threads = threads }
            do {
                for (keyID, path) in zip(keyIDs, publicKeys) { try configuration.addKey(id: keyID, pemFile: path) }
                if let unregistered { try configuration.readUnregistered(path: unregistered) }
            } catch {
                printError("raxx-sandbox: \(error)")
                throw ExitCode(ExitStatus.dataError.rawValue)
            }

            let endpoint: APNsEndpoint
            let port: Int
            do {
                endpoint = try APNsEndpoint(configuration: configuration)
                port = try await endpoint.start()
            } catch {
                printError("raxx-sandbox: cannot start the APNs endpoint: \(error)")
                throw ExitCode(ExitStatus.failure.rawValue)
            }
            let shown = host.contains(":") ? "[\(host)]" : host
            printLine("listening on https://\(shown):\(port)")
            var logger = Logger(label: "raxx-sandbox-apns")
            logger.logLevel = .warning
            let group = ServiceGroup(
                configuration: .init(
                    services: [.init(service: endpoint)],
                    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        }
    }
}

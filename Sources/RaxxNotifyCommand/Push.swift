import ArgumentParser
import Foundation
import RaxxAPI
import RaxxAPNs
import RaxxCLI
import RaxxCore
import RaxxPush
import RaxxWire
import Synchronization

extension RaxxNotify {
    /// `raxx-notify push`: a pipe filter from notifications (JSON Lines) to APNs, one result line each.
    public struct Push: RaxxCommand {
        public static let tool = "raxx-notify"
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "push",
            abstract: "Send push notifications over APNs: JSON Lines in, one result line out per line.",
            discussion: """
                For operators. Each input line is an object with device_token, topic (or --topic), push_type \
                (default alert), priority (10, 5 or 1; default 10), expiration (seconds since 1970), \
                collapse_id (at most 64 bytes), apns_id (a UUID; made when absent, and kept when a \
                notification is sent again), and either payload (the JSON object to send, at most 4096 \
                bytes) or event (an alert as raxx-notify list prints it, rendered into the payload). \
                Notifications go over HTTP/2 on --connections connections, --max-in-flight streams at a \
                time, signed with a provider token made from the .p8 key in --key-file (mode 0600 or it is \
                refused, exit 77; never give a key on the command line or in the environment); the token \
                is reused for up to 50 minutes and shared with other raxx-notify push processes through the \
                state folder. For each line, as its answer arrives, one result: line, token (its last 8 \
                characters), status (delivered, unregistered, failed, not_sent or malformed), reason, \
                apns_id, latency_ms (from the first try to the answer), and for unregistered the time APNs last knew \
                the token valid. 429, 500, 503, \
                GOAWAY and unanswered streams are sent again with jittered backoff for up to --retry-for; \
                an expired provider token is replaced once. A malformed or oversized line gets a malformed \
                result naming the line and field, and the stream goes on; but when the first line names no \
                topic and --topic is not given, that is one usage error (64) and nothing is sent. Exit 0 all \
                delivered, 1 some not delivered (failed or unregistered), 65 some lines malformed, 77 the \
                provider token refused by APNs (check --key-id, --team-id and the key: the run stops at the \
                first refusal), 69 the endpoint unreachable, its certificate refused (trust a local \
                endpoint's CA with --ca-file) or not HTTP/2 (what was not sent is listed as not_sent, and the \
                rest of the input is not tried): an endpoint that cannot be reached before it ever answered is \
                given up on at once; one that answered and then cannot be reached is tried again for up to \
                --retry-for. SIGINT or SIGTERM stop the run: no more input is read, what is in flight has 5 \
                seconds to be answered, every line read is reported (unknown when sent and not answered, with \
                the apns_id to send it again with; not_sent when not sent), then the summary, and exit 130 or \
                143. The summary on stderr (on a terminal the last progress line, into a pipe a line of its \
                own; none with --quiet) counts what was delivered, unregistered, failed, not sent, unknown \
                and malformed, every number grouped (100,000). On a terminal the results are a table with each answer's latency, shown when \
                the run ends and through the pager ($PAGER, less -FRX; not with --no-pager) when longer than \
                the screen, while progress goes to stderr. A real provider key comes from Apple's developer account (Certificates, \
                Identifiers & Profiles, Keys), is downloaded once and never committed. Locally, in four \
                commands: KEY=$(raxx-sandbox apns --make-key keys); raxx-sandbox apns --port 2197 --tls-dir \
                tls --key-id $KEY --public-key keys/AuthKey_$KEY.pub.pem --team-id TEAM123456 --topic \
                app.raxx.ios &; a pushes.jsonl of lines such as {"device_token":"1f1f…","payload":{"aps":{}}}; \
                and raxx-notify push --endpoint https://127.0.0.1:2197 --ca-file tls/ca.pem --key-file \
                keys/AuthKey_$KEY.p8 --key-id $KEY --team-id TEAM123456 --topic app.raxx.ios < pushes.jsonl. 
                """ + connectivity.helpLine
        )

        @Option(help: ArgumentHelp("production, sandbox, or the https URL of an APNs endpoint.", valueName: "endpoint"))
        var endpoint = "production"
        @Option(name: .customLong("key-file"), help: ArgumentHelp("The APNs signing key (.p8, PKCS#8 PEM), mode 0600.", valueName: "path"))
        var keyFile: String
        @Option(name: .customLong("key-id"), help: ArgumentHelp("The signing key's id (the provider token's kid).", valueName: "id"))
        var keyID: String
        @Option(name: .customLong("team-id"), help: ArgumentHelp("The Apple developer team id (the provider token's iss).", valueName: "id"))
        var teamID: String
        @Option(help: ArgumentHelp("The apns-topic of lines that name none (the app's bundle id).", valueName: "topic"))
        var topic: String?
        @Option(name: .customLong("ca-file"), help: ArgumentHelp("Trust the CA certificates in this PEM file (a local endpoint).", valueName: "path"))
        var caFile: String?
        @Option(help: ArgumentHelp("HTTP/2 connections to open at most.", valueName: "n"))
        var connections = 1
        @Option(
            name: .customLong("max-in-flight"),
            help: ArgumentHelp("Notifications sent and not yet answered, at most (and never more than the server's limit per connection).", valueName: "n"))
        var maxInFlight = 100
        @Option(name: .customLong("retry-for"), help: ArgumentHelp("How long after its first try a notification may be sent again.", valueName: "duration"))
        var retryFor = RaxxDuration.seconds(60)
        @Option(help: ArgumentHelp("How long a sent notification may wait for its answer.", valueName: "duration"))
        var timeout = RaxxDuration.seconds(20)
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public static func liveServices(_ configuration: RaxxConfiguration) -> [Provided] {
            [Provided(LivePushService(stateDirectory: configuration.stateDirectory, folders: PrivateFolders(configuration)), as: (any PushService).self)]
        }

        public func validate() throws {
            guard (1...64).contains(connections) else { throw ValidationError("--connections takes 1 to 64.") }
            guard (1...10_000).contains(maxInFlight) else { throw ValidationError("--max-in-flight takes 1 to 10000.") }
            guard timeout.milliseconds > 0 else { throw ValidationError("--timeout takes a duration such as 20s.") }
            for (name, value) in [("--key-id", keyID), ("--team-id", teamID)] {
                guard !value.isEmpty, value.count <= 64, value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                    throw ValidationError("\(name) takes letters and digits (Apple's ids are 10 of them).")
                }
            }
        }

        /// The endpoint's base URL.
        func endpointURL() throws(RaxxError) -> String {
            switch endpoint {
            case "production": return APNs.productionURL
            case "sandbox": return APNs.sandboxURL
            default:
                guard let url = URL(string: endpoint), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty,
                    url.query == nil, url.fragment == nil
                else {
                    throw RaxxError.usage("--endpoint takes production, sandbox or an https URL, not '\(endpoint)'.")
                }
                return endpoint
            }
        }

        public func run(_ context: CommandContext) async throws {
            let base = try endpointURL()
            guard !context.io.stdinIsTTY else {
                throw RaxxError.usage("Give the notifications as JSON Lines on stdin.", hint: "raxx-notify push --key-file … < pushes.jsonl")
            }
            let settings = PushSettings(
                endpoint: base, keyFile: keyFile, keyID: keyID, teamID: teamID, caFile: caFile,
                connections: connections, maxInFlight: maxInFlight, retryFor: retryFor, timeout: timeout,
                connectTimeout: context.configuration.connectTimeout,
                userAgent: "raxx-notify/\(RaxxVersion.current)", failFast: true)
            let output = PushOutput(context: context)
            let lines = InputLines(context.io.stdin, maxLineBytes: PushLine.maxLineBytes)
            let parser = PushLine(defaultTopic: topic, newID: context.world.newID)
            // Up to the first notification: a first line without a topic, and no --topic, is one
            // usage error (a file of them would be that many malformed lines), before anything opens.
            var first: (number: Int, parsed: PushLine.Parsed)? = nil
            while first == nil, let line = try await lines.next() {
                let parsed = parser.parse(line)
                switch parsed {
                case .blank: continue
                case .malformed(let field, _) where field == "topic" && topic == nil:
                    throw RaxxError.usage(
                        "Line \(line.number) names no topic, and --topic is not given.",
                        hint: "Give the app's bundle id: raxx-notify push --topic com.example.app …")
                case .malformed(let field, let message):
                    output.malformed(line: line.number, field: field, message: message)
                case .notification: first = (line.number, parsed)
                }
            }
            let sender = try await context.service((any PushService).self).open(settings)
            let stopping = StopRace<Void>()
            let feed = PushFeed(limit: maxInFlight)
            /// Sends `line`, and in the same way each line the feed hands over as answers make room.
            @Sendable func dispatch(_ line: PushFeed.Line) {
                var next: PushFeed.Line? = line
                while let (number, notification) = next {
                    next = nil
                    // Once the endpoint is found unreachable, refused (its certificate, not
                    // HTTP/2, the provider token), or the run is stopped, the rest is listed, not sent.
                    if let stop = output.stopped ?? stopping.signal.map(PushOutput.Stop.init(signal:)) {
                        output.settled(
                            line: number, notification,
                            PushResult(status: .notSent, reason: stop.reason, apnsID: notification.apnsID, detail: "not sent: " + stop.why))
                        feed.handed()
                        next = feed.settled()
                        continue
                    }
                    output.sent(line: number, notification)
                    feed.handed()
                    // The completion runs after send returns (PushSending), on the engine's thread.
                    sender.send(notification) { result in
                        output.settled(line: number, notification, result)
                        if let following = feed.settled() { dispatch(following) }
                    }
                }
            }
            let sending = Task {
                var pending = first
                do {
                    while true {
                        let number: Int, parsed: PushLine.Parsed
                        if let next = pending {
                            (number, parsed) = next
                            pending = nil
                        } else {
                            // Stopped (SIGINT, SIGTERM): no more input is read.
                            if stopping.signal != nil { break }
                            guard let line = try await lines.next() else { break }
                            (number, parsed) = (line.number, parser.parse(line))
                        }
                        switch parsed {
                        case .blank: continue
                        case .malformed(let field, let message):
                            output.malformed(line: number, field: field, message: message)
                        case .notification(let notification):
                            if let now = feed.put((number, notification)) {
                                dispatch(now)
                            } else {
                                await feed.room()
                            }
                        }
                    }
                } catch {
                    await feed.drained()
                    throw error
                }
                await feed.drained()
            }
            let interrupts = context.world.onInterrupt { signal in
                stopping.stop(signal)
            }
            defer { withExtendedLifetime(interrupts) {} }
            switch await stopping.race(sending) {
            case .finished(.success):
                await sender.shutdown()
                output.finish()
                if let summary = output.summary() { throw summary }
            case .finished(.failure(let error)):
                await sender.shutdown()
                output.finish()
                throw error
            case .stopped(let signal):
                // What is in flight gets a bounded moment to be answered; what is not answered by
                // then is reported unknown, with the apns_id to send it again with.
                let unsent = feed.close()
                var waited = Duration.zero
                while (output.inFlightCount > 0 || feed.handing > 0) && waited < Self.stopGrace {
                    try? await context.world.sleep(.milliseconds(50))
                    waited += .milliseconds(50)
                }
                output.abandonInFlight(waiting: unsent)
                output.finish()
                throw output.stoppedSummary(signal: signal)
            }
        }

        /// How long a stopped run waits for the answers of what it has in flight.
        static let stopGrace = Duration.seconds(5)
    }
}

/// The notifications between the reader and the endpoint: at most `limit` in flight (sent and not
/// yet answered), and up to `backlog` more read and waiting to be sent. Each answer makes room for
/// the next waiting line, which is sent at once from the thread that settled the answer (the HTTP/2
/// engine's, in the turn that read it), so the endpoint is given new work without waiting for the
/// reader; the reader tops the backlog up, woken once per batch rather than once per answer.
final class PushFeed: Sendable {
    typealias Line = (number: Int, notification: PushNotification)

    private struct State {
        var inFlight = 0
        /// Lines handed out to send (or to report not sent) and not yet in the output's books.
        var handing = 0
        /// Once stopped: no more lines are handed out.
        var closed = false
        var waiting = FIFOQueue<Line>()
        /// The reader, waiting until no more than `level` lines wait (or, at the end, until
        /// nothing is in flight or waiting).
        var reader: (level: Int, continuation: CheckedContinuation<Void, Never>)?
        var count: Int { waiting.count }
    }

    let limit: Int
    let backlog: Int
    /// The reader is woken when this many places in the backlog are free.
    let refill: Int
    private let state = Mutex(State())

    init(limit: Int, backlog: Int? = nil) {
        self.limit = max(1, limit)
        self.backlog = max(1, backlog ?? limit)
        refill = max(1, self.backlog / 4)
    }

    var inFlight: Int { state.withLock { $0.inFlight } }

    /// Whether the reader is waiting (tests).
    var isReaderWaiting: Bool { state.withLock { $0.reader != nil } }

    /// A line read: answers it when it may be sent now (a place in flight is taken for it);
    /// otherwise it waits in the backlog, and nil is answered.
    func put(_ line: Line) -> Line? {
        state.withLock { state in
            if state.inFlight < limit && state.count == 0 {
                state.inFlight += 1
                state.handing += 1
                return line
            }
            state.waiting.append(line)
            return nil
        }
    }

    /// Returns once the backlog has room for another line.
    func room() async {
        await wait(until: { $0.count < self.backlog }, level: backlog - refill)
    }

    /// One sent line was settled: answers the next waiting line, to send now in its place.
    func settled() -> Line? {
        let (next, woken) = state.withLock { state -> (Line?, CheckedContinuation<Void, Never>?) in
            state.inFlight -= 1
            var next: Line? = nil
            if !state.closed, let line = state.waiting.popFirst() {
                state.inFlight += 1
                state.handing += 1
                next = line
            }
            guard let reader = state.reader,
                reader.level >= 0 ? state.count <= reader.level : state.count == 0 && state.inFlight == 0
            else { return (next, nil) }
            state.reader = nil
            return (next, reader.continuation)
        }
        woken?.resume()
        return next
    }

    /// A line handed out by `put` or `settled` is in the output's books (sent, or reported).
    func handed() {
        state.withLock { $0.handing -= 1 }
    }

    /// Lines handed out and not yet in the output's books (a stop waits for them).
    var handing: Int { state.withLock { $0.handing } }

    /// Stops handing lines out: the lines still waiting are taken out (a stopped run reports them
    /// not sent).
    func close() -> [Line] {
        state.withLock { state in
            state.closed = true
            return state.waiting.removeAll()
        }
    }

    /// Returns once nothing is in flight or waiting.
    func drained() async {
        await wait(until: { $0.inFlight == 0 && $0.count == 0 }, level: -1)
    }

    /// Waits until `ready` holds; `level` is how few waiting lines wake the reader (-1: none, and
    /// nothing in flight).
    private func wait(until ready: (State) -> Bool, level: Int) async {
        if state.withLock({ ready($0) }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard !ready(state) else { return true }
                state.reader = (level, continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// One input line of `push`, read into a notification or refused naming its field.
struct PushLine: Sendable {
    /// Longer lines are refused unread (a payload is at most 4096 bytes; an event is small).
    static let maxLineBytes = 64 << 10
    static let fields: Set<String> = [
        "device_token", "topic", "push_type", "priority", "expiration", "collapse_id", "apns_id",
        "payload", "event",
    ]

    let defaultTopic: String?
    let newID: @Sendable () -> String

    enum Parsed: Equatable {
        case blank
        case malformed(field: String?, message: String)
        case notification(PushNotification)
    }

    /// A line's fields, however they were read.
    struct Fields {
        var token: String
        var topic: String?
        var pushType: String?
        var priority: Int64?
        var expiration: Int64?
        var collapseID: String?
        var apnsID: String?
        var payload: [UInt8]
    }

    /// `direct: false` reads every line the general way (the tests compare the two).
    func parse(_ line: InputLines.Line, direct: Bool = true) -> Parsed {
        if line.tooLong { return .malformed(field: nil, message: "the line is longer than \(Self.maxLineBytes) bytes") }
        if line.bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .blank }
        // The usual line, read in one pass (FlatJSONObject); anything unusual, or wrong, is read
        // the general way below, which says what is wrong.
        if direct, let flat = FlatJSONObject(line.bytes), let fields = Self.fields(flat) {
            do {
                return .notification(try notification(fields))
            } catch {
                return .malformed(field: error.field, message: error.message)
            }
        }
        return parseGenerally(line)
    }

    /// The fields of a line read directly, when every one is of its expected kind (and there is
    /// no `event`); nil sends the line the general way.
    static func fields(_ flat: FlatJSONObject) -> Fields? {
        var token: String?
        var fields = Fields(token: "", payload: [])
        var payload: [UInt8]?
        for (key, value) in flat.members {
            switch (key, value) {
            case ("topic", .null), ("push_type", .null), ("priority", .null), ("expiration", .null), ("collapse_id", .null),
                ("apns_id", .null):
                continue
            case ("device_token", .string(let text)): token = text
            case ("topic", .string(let text)): fields.topic = text
            case ("push_type", .string(let text)): fields.pushType = text
            case ("priority", .integer(let number)): fields.priority = number
            case ("expiration", .integer(let number)): fields.expiration = number
            case ("collapse_id", .string(let text)): fields.collapseID = text
            case ("apns_id", .string(let text)): fields.apnsID = text
            case ("payload", .object(let bytes)): payload = bytes
            default: return nil
            }
        }
        guard let payload, let token else { return nil }
        fields.token = token
        fields.payload = payload
        return fields
    }

    /// The line read with JSONSerialization: events, and every line the direct reader leaves.
    private func parseGenerally(_ line: InputLines.Line) -> Parsed {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.bytes))) as? [String: Any] else {
            return .malformed(field: nil, message: "not a JSON object")
        }
        if let unknown = object.keys.sorted().first(where: { !Self.fields.contains($0) }) {
            return .malformed(field: unknown, message: "is not a field of a notification (\(Self.fields.sorted().joined(separator: ", ")))")
        }
        do {
            return .notification(try notification(try fields(object, line: line.bytes)))
        } catch {
            return .malformed(field: error.field, message: error.message)
        }
    }

    private func string(_ object: [String: Any], _ field: String) throws(PushNotification.Refusal) -> String? {
        guard let value = object[field], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw .init(field: field, "must be a string") }
        return text
    }

    private func integer(_ object: [String: Any], _ field: String) throws(PushNotification.Refusal) -> Int64? {
        guard let value = object[field], !(value is NSNull) else { return nil }
        // Exactly as written: JSONSerialization keeps a whole number as an integer, and its
        // `doubleValue` would round one past 2^53 (as the direct reader does not). A JSON boolean
        // is an NSNumber too (of kind "c"), and is not a number here.
        guard !(value is String), let number = value as? NSNumber, String(cString: number.objCType) != "c",
            let exact = value as? Int64
        else { throw .init(field: field, "must be a whole number") }
        return exact
    }

    private func fields(_ object: [String: Any], line: [UInt8]) throws(PushNotification.Refusal) -> Fields {
        guard let token = try string(object, "device_token") else { throw .init(field: "device_token", "is missing") }
        var fields = Fields(
            token: token, topic: try string(object, "topic"), pushType: try string(object, "push_type"),
            priority: try integer(object, "priority"), payload: [])
        switch (object["payload"], object["event"]) {
        case (.some(let value), nil):
            guard let dictionary = value as? [String: Any] else { throw .init(field: "payload", "must be a JSON object") }
            // As written (whitespace aside); written out again only when the line's text is unusual.
            if let written = JSONMember.compactValue(named: "payload", in: line) {
                fields.payload = written
            } else if let data = try? JSONSerialization.data(withJSONObject: dictionary, options: [.withoutEscapingSlashes]) {
                fields.payload = Array(data)
            } else {
                throw .init(field: "payload", "must be a JSON object")
            }
        case (nil, .some(let value)):
            guard let dictionary = value as? [String: Any], let data = try? JSONSerialization.data(withJSONObject: dictionary) else {
                throw .init(field: "event", "must be an alert object (seq, type, created_at, title, …)")
            }
            let event: Components.Schemas.Event
            do {
                event = try Self.decoder.decode(Components.Schemas.Event.self, from: data)
            } catch {
                throw .init(field: "event", "is not an alert (it needs seq, type, created_at and title): \(Self.describe(error))")
            }
            fields.payload = EventPayload.render(event)
        case (nil, nil): throw .init(field: "payload", "is missing (give payload or event)")
        default: throw .init(field: "event", "give payload or event, not both")
        }
        fields.expiration = try integer(object, "expiration")
        fields.collapseID = try string(object, "collapse_id")
        fields.apnsID = try string(object, "apns_id")
        return fields
    }

    /// The notification a line's fields make, checked as APNs checks it.
    private func notification(_ fields: Fields) throws(PushNotification.Refusal) -> PushNotification {
        guard let topic = fields.topic ?? defaultTopic else {
            throw .init(field: "topic", "is missing (give it on the line or with --topic)")
        }
        var pushType = APNsPushType.alert
        if let name = fields.pushType {
            guard let type = APNsPushType(rawValue: name) else {
                throw .init(field: "push_type", "must be one of \(APNsPushType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            pushType = type
        }
        var priority = APNsPriority.immediate
        if let number = fields.priority {
            guard let known = APNsPriority(rawValue: Int(number)) else { throw .init(field: "priority", "must be 10, 5 or 1") }
            priority = known
        }
        let notification = PushNotification(
            deviceToken: fields.token, topic: topic, pushType: pushType, priority: priority,
            expiration: fields.expiration, collapseID: fields.collapseID, apnsID: fields.apnsID, payload: fields.payload)
        // The payload was just made from a JSON object (or rendered): only its size is left to check.
        try notification.check(parsingPayload: false)
        var identified = notification
        if identified.apnsID == nil { identified.apnsID = newID().uppercased() }
        return identified
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = RFC3339.date(from: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 time: \(text)"))
            }
            return date
        }
        return decoder
    }()

    static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: "\(key.stringValue) is missing"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "\(error)"
        }
    }
}

/// The result lines (written and flushed as each notification settles, from whichever task
/// settles it), the tally behind the exit status, and progress on a terminal.
// @unchecked: keeps NSLock held while writing a result line, so lines, tally and progress stay in step.
final class PushOutput: @unchecked Sendable {
    private let context: CommandContext
    private let lock = NSLock()
    /// What each line came to: a result's status, or malformed.
    enum LineStatus: Hashable {
        case result(PushResult.Status)
        case malformed
        var name: String {
            switch self {
            case .result(let status): status.rawValue
            case .malformed: "malformed"
            }
        }
    }
    private var counts: [LineStatus: Int] = [:]
    private func count(_ status: PushResult.Status) -> Int { counts[.result(status), default: 0] }
    /// Results are flushed as they come on a terminal; into a pipe or a file when nothing is left
    /// in flight (a reader waiting for the last answers has them) and otherwise at most every
    /// `flushInterval`, not one write per line.
    static let flushInterval = Duration.milliseconds(50)
    private var lastFlush = ContinuousClock.now
    private var inputLines = 0
    private var sentCount = 0
    /// Why the rest of the input is not sent: the endpoint unreachable, or refused (TLS, not HTTP/2).
    struct Stop: Sendable {
        var reason: String
        var why: String
        /// The first refusal's own words (the certificate problem, the provider token's reason).
        var detail: String?

        init(reason: String, why: String, detail: String? = nil) {
            self.reason = reason
            self.why = why
            self.detail = detail
        }

        /// What stops the run, from a result: the endpoint unreachable or refused, or the provider
        /// token refused (every notification after it would be refused the same way).
        init?(_ result: PushResult) {
            switch result.reason {
            case "Unreachable": self.init(reason: "Unreachable", why: "the endpoint was unreachable")
            case "TLS": self.init(reason: "TLS", why: "the endpoint's TLS was refused", detail: result.detail)
            case "NotHTTP2": self.init(reason: "NotHTTP2", why: "the endpoint does not speak HTTP/2")
            case let reason? where APNsReason(rawValue: reason).map(Self.providerTokenRefusals.contains) == true:
                self.init(reason: "ProviderToken", why: "APNs refused the provider token (\(reason))", detail: reason)
            default: return nil
            }
        }

        /// A stop asked for by a signal.
        init(signal: Int32) {
            self.init(reason: "Stopped", why: "the run was stopped (\(signal == SIGTERM ? "SIGTERM" : "SIGINT")) before it was sent")
        }

        /// APNs's answers that refuse the provider token itself (an expired one is replaced once first).
        static let providerTokenRefusals: Set<APNsReason> = [
            .invalidProviderToken, .missingProviderToken, .unrelatedKeyIdInToken,
            .expiredProviderToken,
        ]
    }
    private var stop: Stop?
    /// On a terminal: how many settled, and how.
    private let progress: ProgressLine
    /// Sent and not yet answered, by line.
    private var inFlight: [Int: PushNotification] = [:]
    /// Once the run is stopped and what was in flight reported unknown: later answers are not written.
    private var sealed = false
    /// The header of the text table is written once, before the first row.
    private var headerWritten = false
    /// On a terminal with a pager, the table is kept and shown when the run ends, through the
    /// pager when longer than the screen (the progress line counts meanwhile); else its rows are
    /// written as they settle.
    private let paging: Bool
    private var kept = ""

    init(context: CommandContext) {
        self.context = context
        progress = context.progressLine("pushing", unit: "settled")
        paging = context.format == .text && context.pagesLongText
    }

    var stopped: Stop? { lock.withLock { stop } }

    var inFlightCount: Int { lock.withLock { inFlight.count } }

    func sent(line: Int, _ notification: PushNotification) {
        lock.withLock {
            sentCount += 1
            inFlight[line] = notification
        }
    }

    /// After a stop: what is still in flight is reported `unknown` (it may have reached the device;
    /// sent again with its apns_id, it is the same notification), the lines read and not sent
    /// (`waiting`) `not_sent`, and nothing more is written.
    func abandonInFlight(waiting: [PushFeed.Line]) {
        // Taken and sealed at once: an answer that comes after this is not written, so no line is
        // reported twice.
        let left = lock.withLock { () -> [(key: Int, value: PushNotification)] in
            sealed = true
            defer { inFlight = [:] }
            return inFlight.sorted { $0.key < $1.key }
        }
        for (line, notification) in left {
            settled(
                line: line, notification,
                PushResult(
                    status: .unknown, reason: "Stopped", apnsID: notification.apnsID,
                    detail: "sent, and no answer came before the stop: send it again with this apns_id"),
                abandoning: true)
        }
        for (line, notification) in waiting {
            settled(
                line: line, notification,
                PushResult(
                    status: .notSent, reason: "Stopped", apnsID: notification.apnsID,
                    detail: "not sent: the run was stopped before it was sent"), abandoning: true)
        }
    }

    func malformed(line: Int, field: String?, message: String) {
        var w = JSONLineWriter()
        w.add("field", field)
        w.add("line", line)
        w.add("message", message)
        w.add("status", "malformed")
        write(w, status: .malformed, line: nil) {
            ["\(line)", "-", "malformed", [field, message].compactMap { $0 }.joined(separator: ": "), "-", "-"]
        }
    }

    func settled(line: Int, _ notification: PushNotification, _ result: PushResult, abandoning: Bool = false) {
        var w = JSONLineWriter()
        w.add("apns_id", result.apnsID ?? notification.apnsID)
        w.add(
            "latency_ms", result.latency.map { Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15 },
            decimals: 2)
        w.add("line", line)
        if result.status != .delivered { w.add("message", result.detail) }
        w.add("reason", result.reason)
        w.add("status", result.status.rawValue)
        w.add("timestamp", result.timestamp.map { Date(timeIntervalSince1970: Double($0) / 1000) })
        w.add("token", notification.tokenSuffix)
        if result.status == .notSent || result.status == .failed, let found = Stop(result) {
            lock.withLock { if stop == nil { stop = found } }
        }
        write(w, status: .result(result.status), line: line, abandoning: abandoning) {
            let latency = result.latency.map { String(format: "%.1f ms", Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15) }
            return [
                "\(line)", "…" + notification.tokenSuffix, result.status.rawValue, result.reason ?? "-", latency ?? "-",
                result.apnsID ?? notification.apnsID ?? "-",
            ]
        }
    }

    /// The text table's columns: rows are written as they settle, so the widths are fixed.
    static let columns: [(name: String, width: Int)] = [
        ("LINE", 6), ("TOKEN", 11), ("STATUS", 13), ("REASON", 24), ("LATENCY", 10),
        ("APNS ID", 0),
    ]

    static func tableRow(_ cells: [String]) -> String {
        zip(cells, columns).map { cell, column in
            column.width == 0 ? cell : cell.padding(toLength: max(column.width, cell.count + 1), withPad: " ", startingAt: 0)
        }.joined()
    }

    /// Writes one line's result: `writer`'s JSON line, or the table row `row` makes (only made for text).
    private func write(_ writer: JSONLineWriter, status: LineStatus, line: Int?, abandoning: Bool = false, row: () -> [String]) {
        var writer = writer
        var text: String
        switch context.format {
        case .json: text = writer.line()
        case .text: text = TerminalText.printable(Self.tableRow(row())) + "\n"
        }
        lock.lock()
        defer { lock.unlock() }
        // After a stop, only what the stop reports is written: an answer arriving later, or a
        // malformed line read meanwhile, is not (each line is reported once, before the summary).
        if sealed && !abandoning { return }
        if let line { inFlight.removeValue(forKey: line) }
        if context.format == .text && !headerWritten {
            headerWritten = true
            text = Self.tableRow(Self.columns.map(\.name)) + "\n" + text
        }
        counts[status, default: 0] += 1
        inputLines += 1
        if paging {
            kept += text
        } else {
            context.io.stdout.write(text)
            let now = ContinuousClock.now
            if context.io.stdoutIsTTY || inFlight.isEmpty || now - lastFlush >= Self.flushInterval {
                lastFlush = now
                context.io.stdout.flush()
            }
        }
        if context.io.stderrIsTTY { progress.update(done: counts.values.reduce(0, +), detail: progressDetail()) }
    }

    private func progressDetail() -> String {
        "\(n(count(.delivered))) delivered, \(n(count(.unregistered))) unregistered, "
            + "\(n(count(.failed))) failed, \(n(count(.notSent))) not sent, \(n(counts[.malformed, default: 0])) malformed"
    }

    /// A count as every number of the summary is written: grouped (100,000), as the progress line's.
    private func n(_ count: Int) -> String { ProgressLine.grouped(count) }

    /// Every count, and of how many lines: what really happened, in one sentence.
    private var tally: String {
        let unknown = count(.unknown)
        return "\(n(count(.delivered))) delivered, \(n(count(.unregistered))) unregistered, "
            + "\(n(count(.failed))) failed, \(n(count(.notSent))) not sent, "
            + (unknown > 0 ? "\(n(unknown)) unknown, " : "") + "\(n(counts[.malformed, default: 0])) malformed, of \(n(counts.values.reduce(0, +)))"
    }

    /// The run was stopped by `signal`: what became of every line read, and exit 130 or 143.
    func stoppedSummary(signal: Int32) -> RaxxError {
        lock.lock()
        defer { lock.unlock() }
        let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
        return RaxxError(
            code: .stopped, message: "Stopped by \(name): \(tally).",
            hint: "Send the not_sent and unknown lines again (their results carry the apns_id to keep); lines after them were not read.",
            stoppedBy: signal == SIGTERM ? .terminated : .interrupted)
    }

    func finish() {
        // The kept table is shown after the last count (outside the lock: the pager is waited for).
        let table = lock.withLock { () -> String in
            context.io.stdout.flush()
            // The last count stays on the screen (with a newline); with no input there is nothing to say.
            progress.finish(keep: inputLines > 0)
            defer { kept = "" }
            return kept
        }
        if !table.isEmpty {
            context.writePaged(table)
            context.io.stdout.flush()
        }
        lock.lock()
        defer { lock.unlock() }
        // Into a pipe the same summary ends stderr, as a line of its own.
        if !context.io.stderrIsTTY, inputLines > 0 { context.say("raxx-notify push: " + tally) }
    }

    /// The error the exit status comes from, or nil when every notification was delivered.
    func summary() -> RaxxError? {
        lock.lock()
        defer { lock.unlock() }
        let total = counts.values.reduce(0, +)
        let notSent = count(.notSent)
        let malformed = counts[.malformed, default: 0]
        let undelivered = count(.failed) + count(.unregistered)
        switch stop?.reason {
        case "Unreachable":
            return RaxxError(
                code: .unavailable, message: "The APNs endpoint could not be reached: \(tally).",
                hint: "Check --endpoint and the network, then send the not_sent lines again (they keep their apns_id).", connectivity: .offlineHard)
        case "TLS":
            let why = stop?.detail.map { " (\($0))" } ?? ""
            return RaxxError(
                code: .tlsRefused, message: "The APNs endpoint's certificate was refused\(why): \(tally).",
                hint: "Check --endpoint; a local endpoint's CA is trusted with --ca-file FILE. Then send the not_sent lines again.")
        case "NotHTTP2":
            return RaxxError(
                code: .notHTTP2, message: "The endpoint does not speak HTTP/2, as APNs does: \(tally).",
                hint: "Check --endpoint.")
        case "ProviderToken":
            return RaxxError(
                code: .providerTokenRefused, message: "APNs refused the provider token (\(stop?.detail ?? "InvalidProviderToken")): \(tally).",
                hint: "Check --key-id (the id of the key in --key-file), --team-id (the team the key belongs to) and that the key is "
                    + "enabled for APNs; then send the failed and not_sent lines again.")
        default:
            break
        }
        if malformed > 0 {
            return RaxxError(code: .badInput, message: "\(n(malformed)) of \(n(total)) lines were malformed (see their results): \(tally).")
        }
        if undelivered + notSent > 0 {
            return RaxxError(code: .notDelivered, message: "\(n(undelivered + notSent)) of \(n(total)) notifications were not delivered (see their results).")
        }
        return nil
    }
}

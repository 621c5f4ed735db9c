import Foundation
import RaxxAPNs
import RaxxCore

/// Everything a sender needs: where, with which key, how many streams, how patiently.
public struct PushSettings: Sendable, Equatable {
    /// The endpoint's base URL (https).
    public var endpoint: String
    /// The path of the .p8 signing key (0600).
    public var keyFile: String
    public var keyID: String
    public var teamID: String
    public var caFile: String?
    public var connections: Int
    public var maxInFlight: Int
    public var retryFor: RaxxDuration
    /// How long a sent stream may wait for its answer.
    public var timeout: RaxxDuration
    public var connectTimeout: RaxxDuration
    public var userAgent: String
    /// Whether an endpoint never reached yet is given up on at once (`PushClient.Options.failFast`).
    public var failFast: Bool

    public init(
        endpoint: String, keyFile: String, keyID: String, teamID: String, caFile: String? = nil, connections: Int = 1,
        maxInFlight: Int = 100, retryFor: RaxxDuration = .seconds(60), timeout: RaxxDuration = .seconds(20),
        connectTimeout: RaxxDuration = .seconds(5), userAgent: String = "raxx/\(RaxxVersion.current)",
        failFast: Bool = false
    ) {
        self.endpoint = endpoint
        self.keyFile = keyFile
        self.keyID = keyID
        self.teamID = teamID
        self.caFile = caFile
        self.connections = connections
        self.maxInFlight = maxInFlight
        self.retryFor = retryFor
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.userAgent = userAgent
        self.failFast = failFast
    }
}

/// Something that settles notifications (a `PushClient`, or a test's).
public protocol PushSending: Sendable {
    func send(_ notification: PushNotification) async -> PushResult
    /// Sends `notification`; `completion` runs once with its result, on whichever thread has it
    /// (keep it short), and never before this returns, so it may send the next notification. A
    /// pipe of many notifications sends this way, with no task for each.
    func send(_ notification: PushNotification, completion: @escaping @Sendable (PushResult) -> Void)
    /// Lets what is in flight finish and closes the connections.
    func shutdown() async
}

extension PushSending {
    public func send(_ notification: PushNotification, completion: @escaping @Sendable (PushResult) -> Void) {
        Task { completion(await send(notification)) }
    }
}

extension PushClient: PushSending {}

/// Opens senders: the seam a command reaches the push world through (`context.service()`).
public protocol PushService: Sendable {
    func open(_ settings: PushSettings) async throws(RaxxError) -> any PushSending
}

/// The real thing: the key from its file, provider tokens shared through the state folder, and
/// HTTP/2 over libcurl.
public struct LivePushService: PushService {
    public let stateDirectory: URL
    /// The rule the token folder is held to (by default, the state folder as its own root).
    public let folders: PrivateFolders?

    public init(stateDirectory: URL, folders: PrivateFolders? = nil) {
        self.stateDirectory = stateDirectory
        self.folders = folders
    }

    public func open(_ settings: PushSettings) async throws(RaxxError) -> any PushSending {
        try await PushClient.open(settings, stateDirectory: stateDirectory, folders: folders)
    }
}

extension PushClient {
    /// A client for `settings`: reads the key (refused unless 0600), shares tokens through
    /// `stateDirectory/apns/`, and starts an HTTP/2 engine. The first token is minted (or taken
    /// from the shared file) now, so a key or folder problem shows before any notification.
    public static func open(
        _ settings: PushSettings, stateDirectory: URL, folders: PrivateFolders? = nil,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) async throws(RaxxError) -> PushClient {
        let key = try ProviderKey.load(path: settings.keyFile)
        let tokens = ProviderTokens(
            key: key, keyID: settings.keyID, teamID: settings.teamID,
            sharing: TokenFile(
                stateDirectory: stateDirectory, teamID: settings.teamID, keyID: settings.keyID,
                folders: folders),
            clock: clock)
        _ = try await tokens.current()
        let engine = try HTTP2Engine(
            options: .init(
                connections: settings.connections, maxInFlight: settings.maxInFlight,
                streamTimeout: settings.timeout, connectTimeout: settings.connectTimeout,
                caFile: settings.caFile, userAgent: settings.userAgent,
                // What PushClient reads of an answer.
                answerHeaders: [APNs.Header.id]))
        return PushClient(
            options: .init(endpoint: settings.endpoint, retryFor: settings.retryFor, failFast: settings.failFast), tokens: tokens, transport: engine)
    }
}

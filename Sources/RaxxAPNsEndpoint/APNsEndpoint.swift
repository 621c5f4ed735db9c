import Crypto
import Foundation
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import RaxxAPNs
import ServiceLifecycle
import Synchronization

/// What `raxx-sandbox apns` is started with. (Unchecked: swift-crypto's public keys are immutable
/// values it does not mark Sendable yet.)
// @unchecked: holds swift-crypto's P256 public keys, which are not marked Sendable.
public struct APNsEndpointConfiguration: @unchecked Sendable {
    public var host = "127.0.0.1"
    public var port = 0
    /// Where ca.pem is written.
    public var tlsDirectory: String
    public var teamID: String
    /// The registered keys: key ID → public key.
    public var keys: [String: P256.Signing.PublicKey]
    /// The app topic served; nil accepts any well-formed topic.
    public var topic: String?
    /// SETTINGS_MAX_CONCURRENT_STREAMS (Apple's is 1000 at most).
    public var maxConcurrentStreams = 1000
    /// Device tokens answering 410 Unregistered, with their timestamps (ms) or nil for "now".
    public var unregistered: [String: Int64?] = [:]
    /// The share of otherwise valid pushes that answer 429, 500 or 503.
    public var failRate = 0.0
    /// The seed of the failure dice.
    public var seed: UInt64 = 0
    /// After this many streams on a connection: GOAWAY and a graceful close.
    public var goAwayAfter: Int?
    /// After this many accepted pushes under one provider token, that token is expired.
    public var expireProviderTokensAfter: Int?
    /// The log of accepted (and refused) pushes, one JSON line each.
    public var logPath: String?
    /// Event loop threads (default: one per core).
    public var threads = System.coreCount

    public init(tlsDirectory: String, teamID: String, keys: [String: P256.Signing.PublicKey]) {
        self.tlsDirectory = tlsDirectory
        self.teamID = teamID
        self.keys = keys
    }
}

/// A local APNs endpoint: Apple's HTTP/2 provider API over TLS (ALPN h2), checking requests as
/// APNs does and playing scripted failures. `start()` binds and writes ca.pem; `stop()` closes
/// the listener and the connections and flushes the log. As a `Service`, it runs until the
/// service group's graceful shutdown (SIGINT/SIGTERM in `raxx-sandbox apns`).
public final class APNsEndpoint: Service, Sendable {
    public let configuration: APNsEndpointConfiguration
    public let desk: PushDesk
    public let identity: TLSIdentity
    private let group: MultiThreadedEventLoopGroup
    private let state = Mutex(State())

    private struct State {
        var serverChannel: (any Channel)?
        var connections: [ObjectIdentifier: any Channel] = [:]
        var connectionCount = 0
        var stopped = false
    }

    public init(configuration: APNsEndpointConfiguration, clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.configuration = configuration
        let log = try configuration.logPath.map { try PushLog(path: $0) }
        desk = PushDesk(
            checks: PushChecks(topic: configuration.topic),
            gate: ProviderTokenGate(
                teamID: configuration.teamID, keys: configuration.keys,
                expireAfter: configuration.expireProviderTokensAfter),
            script: FailureScript(unregistered: configuration.unregistered, failRate: configuration.failRate, seed: configuration.seed),
            log: log, clock: clock
        )
        identity = try TLSIdentity(now: clock())
        group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
    }

    /// Writes ca.pem, binds, and answers the port it listens on.
    public func start() async throws -> Int {
        try identity.writeCA(to: configuration.tlsDirectory)
        let sslContext = try NIOSSLContext(configuration: identity.serverConfiguration())
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maxConcurrentStreams),
            HTTP2Setting(parameter: .initialWindowSize, value: 65535),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024),
        ]
        // A connection window for many concurrent streams of up to 4 KiB each.
        connectionConfiguration.targetWindowSize = 8 * 1024 * 1024
        // A well-behaved client opening and finishing thousands of streams is not an attack.
        connectionConfiguration.maximumConnectionGlitches = 10_000
        var streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
        streamConfiguration.targetWindowSize = 65535
        // libcurl (7.88, Debian's) retires many finished streams with an RST_STREAM. NIO's guard
        // against rapid resets closes a connection after 200 of them in 30 s: every few hundred
        // pushes, with a pause and a resend for each push in flight (a fifth of the push benchmark's
        // time, and its 200 ms p99). APNs documents no such limit; a client resetting streams
        // faster than this still loses its connection.
        streamConfiguration.streamResetFrameRateLimit.maximumCount = 100_000
        let goAwayAfter = configuration.goAwayAfter
        let desk = self.desk

        let (http2Connection, http2Stream) = (connectionConfiguration, streamConfiguration)  // immutable copies for the channels
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [weak self] channel in
                guard let self else { return channel.close() }
                let number = self.register(channel)
                let connection = PushConnection(number: number, goAwayAfter: goAwayAfter, channel: channel)
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLServerHandler(context: sslContext))
                    _ = try sync.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: http2Connection, streamConfiguration: http2Stream
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(PushStreamHandler(desk: desk, connection: connection))
                        }
                    }
                    try sync.addHandler(ConnectionErrorHandler(connection: connection))
                }
            }
        let channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        state.withLock { $0.serverChannel = channel }
        return channel.localAddress?.port ?? configuration.port
    }

    /// Runs until graceful shutdown (or cancellation), then stops.
    public func run() async throws {
        try? await gracefulShutdown()
        await stop()
    }

    /// Closes the listener and every connection, flushes and closes the log, ends the event loops.
    public func stop() async {
        let (first, server, open): (Bool, (any Channel)?, [any Channel]) = state.withLock { state in
            guard !state.stopped else { return (false, nil, []) }
            state.stopped = true
            return (true, state.serverChannel, Array(state.connections.values))
        }
        guard first else { return }
        try? await server?.close().get()
        for channel in open { try? await channel.close().get() }
        desk.log?.close()
        try? await group.shutdownGracefully()
    }

    /// Counts a new connection and tracks it until it closes.
    private func register(_ channel: any Channel) -> Int {
        let id = ObjectIdentifier(channel)
        let number: Int? = state.withLock { state in
            guard !state.stopped else { return nil }
            state.connectionCount += 1
            state.connections[id] = channel
            return state.connectionCount
        }
        guard let number else {
            channel.close(promise: nil)
            return 0
        }
        channel.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            _ = self.state.withLock { $0.connections.removeValue(forKey: id) }
        }
        return number
    }

    /// Connections accepted so far.
    public var connectionsAccepted: Int { state.withLock { $0.connectionCount } }
}

/// Closes a connection on an error the HTTP/2 or TLS layer could not handle itself — except after
/// this endpoint's own GOAWAY. Then a client that sent frames for streams above the GOAWAY's last
/// stream before it saw the GOAWAY makes swift-nio-http2 report an error for each (it ignores the
/// new streams' HEADERS, then finds their DATA on streams it never opened); closing there would
/// drop the answers to the streams below, still on their way out. The connection closes once those
/// are written, as after every GOAWAY here.
private final class ConnectionErrorHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    private let connection: PushConnection

    init(connection: PushConnection) { self.connection = connection }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if connection.lastStreamID != nil { return }
        context.close(promise: nil)
    }
}

extension APNsEndpointConfiguration {
    /// Why a key or tokens file cannot be used.
    public struct FileError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var message: String
        public var description: String { "\(path): \(message)" }
    }

    /// Registers the public key in the PEM file at `path` (SubjectPublicKeyInfo, P-256) for `keyID`.
    public mutating func addKey(id keyID: String, pemFile path: String) throws(FileError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FileError(path: path, message: "cannot read the public key file")
        }
        guard let text = String(data: data, encoding: .utf8),
            let key = try? P256.Signing.PublicKey(pemRepresentation: text)
        else {
            throw FileError(path: path, message: "not a PEM P-256 public key (-----BEGIN PUBLIC KEY-----)")
        }
        keys[keyID] = key
    }

    /// Reads the unregistered tokens file at `path` (see `FailureScript.readUnregistered`).
    public mutating func readUnregistered(path: String) throws(FileError) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw FileError(path: path, message: "cannot read the tokens file as UTF-8 text")
        }
        do {
            unregistered = try FailureScript.readUnregistered(text)
        } catch {
            throw FileError(path: path, message: error.description)
        }
    }
}

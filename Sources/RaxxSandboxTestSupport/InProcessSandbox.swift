import Foundation
import Logging
import OpenAPIRuntime
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxSandbox
import RaxxTestSupport

/// Runs an in-process sandbox on 127.0.0.1, port 0, and hands `body` its URL.
public func withSandbox(
    configuration: SandboxConfiguration = SandboxConfiguration(port: 0), database: SandboxDatabase? = nil,
    clock: @escaping @Sendable () -> Date = { Date() },
    _ body: (URL) async throws -> Void
) async throws {
    let db = try database ?? SandboxDatabase(path: ":memory:")
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    var logger = Logger(label: "raxx-sandbox-test")
    logger.logLevel = .critical  // cancelling the server at the end of a test is not an error
    var configuration = configuration
    configuration.port = 0
    let app = try buildApplication(
        configuration: configuration, database: db, clock: clock, logger: logger,
        onListening: { continuation.yield($0) })
    try await withThrowingTaskGroup(of: Void.self) { group in
        // The server's tasks run on the concurrency pool, whoever starts it: a child task would
        // otherwise inherit a `.blocking` test's lanes, which the end-to-end suites hold for
        // seconds at a time while their tools run, and the sandbox would answer nothing meanwhile.
        group.addTask(executorPreference: globalConcurrentExecutor) { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw SandboxProcess.SandboxError.didNotStart("no port") }
        do {
            try await body(URL(string: "http://127.0.0.1:\(port)")!)
        } catch {
            group.cancelAll()
            throw error
        }
        group.cancelAll()
    }
}

/// The generated client for a sandbox URL, as the tools build it, with a 60-second timeout rather
/// than the tools' 20-second default. In-process sandboxes once took longer than 20 s to answer in
/// fresh-clone CI (2026-11-23): the end-to-end suites held every thread of the concurrency pool,
/// which the sandboxes' handlers run on. Those suites now run on lanes of their own (`BlockingTrait`).
public func generatedClient(_ url: URL, middlewares: [any ClientMiddleware] = []) throws -> Client {
    let configuration = try RaxxConfiguration(environment: ["HOME": "/tmp", "RAXX_API_URL": url.absoluteString, "RAXX_TIMEOUT": "60s"])
    return RaptorClient.make(tool: "raxx-test", configuration: configuration, middlewares: middlewares)
}

extension SandboxDatabase {
    /// Where this database's sandbox sends email.
    public var mailbox: Mailbox { Mailbox(directory: mailer.directory) }
}

import Foundation
import Logging
import ServiceLifecycle

/// A background service of the sandbox: runs `pass` at start and then every `interval`, until
/// graceful shutdown or cancellation. A failed pass is logged (its error's type only) and the
/// next one tries again. The sandbox runs two: the session-expiry scan (`session_expiring` for
/// sessions within 15 minutes of their end, see `EventHandlers.noteExpiringSessions`) and the
/// dead man's switch scan (`DeadManSwitches.fireDue`).
struct PeriodicScan: Service {
    let name: String
    let interval: Duration
    let logger: Logger
    let pass: @Sendable () async throws -> Void

    func run() async throws {
        let name = self.name, interval = self.interval, logger = self.logger, pass = self.pass
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await pass()
                } catch {
                    // The error's type only (see ProblemMiddleware): the next pass tries again.
                    logger.error("\(name) failed", metadata: ["error_type": "\(String(reflecting: type(of: error)))"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}

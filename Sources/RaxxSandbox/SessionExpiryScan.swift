import Foundation
import Logging
import ServiceLifecycle

/// A background service of the sandbox: every `interval`, writes `session_expiring` for the
/// sessions within 15 minutes of their end (once per session; see
/// `EventHandlers.noteExpiringSessions`), by the injected clock. It scans once at start, and stops
/// at graceful shutdown or cancellation.
struct SessionExpiryScan: Service {
    let events: EventHandlers
    let interval: Duration
    let logger: Logger

    func run() async throws {
        let events = self.events, interval = self.interval, logger = self.logger
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await events.noteExpiringSessions()
                } catch {
                    // The error's type only (see ProblemMiddleware): the next pass tries again.
                    logger.error("session expiry scan failed", metadata: ["error_type": "\(String(reflecting: type(of: error)))"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}

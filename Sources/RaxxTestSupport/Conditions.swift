import Foundation
import Testing

/// Polls `condition` every 10 ms until it holds (a long poll registered, a log checkpointed by
/// another thread), recording an issue if it has not within 60 s, which only rule out forever.
/// (An in-process request waited 15 s and more while the end-to-end suites held the concurrency
/// pool's threads; they have run on lanes of their own since, see `BlockingTrait`.)
public func waitUntil(_ condition: @Sendable () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within 60 s", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// The size of the file at `path` in bytes, 0 when there is none (a log not written yet).
public func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
}

/// As `waitUntil(_:)`, for a condition that is read asynchronously (an async database read, an actor).
public func waitUntil(_ condition: @Sendable () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within 60 s", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

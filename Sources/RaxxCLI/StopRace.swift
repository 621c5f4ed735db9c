import Foundation

/// A command's task raced against a stop asked for by a signal (Ctrl-C, SIGTERM): whichever comes
/// first. A stop that wins leaves the task to the caller (to cancel, or to the process's end): it
/// may be blocked where a cancellation does not reach, reading a pipe that stays open.
// @unchecked: its state is guarded by the lock.
public final class StopRace<Value: Sendable>: @unchecked Sendable {
    public enum Outcome: Sendable {
        case finished(Result<Value, any Error>)
        case stopped(signal: Int32)
    }

    private let lock = NSLock()
    private var stoppedBy: Int32?
    private var waiter: CheckedContinuation<Outcome, Never>?
    private var outcome: Outcome?

    public init() {}

    /// The signal that asked for a stop, once one did (even one that came after the task's end).
    public var signal: Int32? { lock.withLock { stoppedBy } }

    public func stop(_ signal: Int32) {
        settle(.stopped(signal: signal), signal: signal)
    }

    /// Whichever comes first: `task`'s end, or a stop.
    public func race(_ task: Task<Value, any Error>) async -> Outcome {
        Task { settle(.finished(await task.result), signal: nil) }
        return await withCheckedContinuation { continuation in
            lock.withLock {
                if let outcome { continuation.resume(returning: outcome) } else { waiter = continuation }
            }
        }
    }

    private func settle(_ result: Outcome, signal: Int32?) {
        let waiter: CheckedContinuation<Outcome, Never>? = lock.withLock {
            if let signal, stoppedBy == nil { stoppedBy = signal }
            guard outcome == nil else { return nil }
            outcome = result
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: result)
    }
}

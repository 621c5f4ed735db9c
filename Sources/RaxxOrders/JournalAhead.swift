import Foundation
import Synchronization

/// A journal write under way on a thread of its own: the next order's entry, written while the
/// order before it is at the server, so that the next order goes out as soon as the answer is in
/// instead of after a commit. `wait` answers when it is done (without holding a thread), with its
/// error if it failed.
final class JournalAhead: Sendable {
    private let state = Mutex<(result: Result<Void, any Error>?, waiter: CheckedContinuation<Void, any Error>?)>((nil, nil))

    /// The journal's writes, one after another in the order they were started.
    private static let queue = DispatchQueue(label: "raxx-journal-ahead", qos: .userInitiated)

    init(_ write: @escaping @Sendable () throws -> Void) {
        Self.queue.async { [self] in
            let result = Result { try write() }
            let waiter = state.withLock { state in
                state.result = result
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(with: result)
        }
    }

    /// Returns once the write is done; throws its error.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let done = state.withLock { state -> Result<Void, any Error>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let done { continuation.resume(with: done) }
        }
    }
}

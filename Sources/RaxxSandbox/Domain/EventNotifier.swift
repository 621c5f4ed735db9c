import Foundation
import ServiceLifecycle
import Synchronization

/// Tells long polls of the events feed that an event for their user was committed.
///
/// Every transaction that writes an event signals its user once it commits (`EventLog` notes the
/// user with `signalOnCommit`; the writer's `EventCommits` observer ends the transaction), so a
/// waiter never wakes for a rolled-back event, and wakes for events however they were written: a
/// fill in any handler's sweep, a rejection, a security alert, the session-expiry scan.
///
/// A waiter takes a `mark` (the user's signal count) before it reads the feed, and waits for a
/// signal after that mark: an event committed between the read and the wait is not lost.
public final class EventNotifier: Sendable {
    /// Why a wait ended.
    enum Wake: Sendable, Equatable {
        /// An event for the user was committed after the mark.
        case event
        /// The timeout passed, the server began shutting down, or the task was cancelled.
        case over
    }

    private struct Waiter {
        var user: String
        var mark: UInt64
        var continuation: CheckedContinuation<Void, Never>?
        var wake: Wake?
    }

    private struct State {
        var signals: [String: UInt64] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// The users an event was written for in the write transaction under way: signalled when it
    /// commits, forgotten when it rolls back (`transactionEnded`, told by the writer's
    /// `EventCommits`). The sandbox has one writer connection: one write transaction at a time.
    private let uncommitted = Mutex<[String]>([])

    public init() {}

    /// An event for `user` was written in the write transaction under way.
    func signalOnCommit(_ user: String) {
        uncommitted.withLock { $0.append(user) }
    }

    /// The write transaction under way ended: its users are signalled (once each) if it committed.
    func transactionEnded(committed: Bool) {
        let users: [String] = uncommitted.withLock { users in
            defer { users.removeAll(keepingCapacity: true) }
            return users
        }
        guard committed else { return }
        var seen = Set<String>()
        for user in users where seen.insert(user).inserted { signal(user) }
    }

    /// The name to wait on for every user's events (the push dispatcher does).
    static let everyone = "*"

    /// How many times `user` has been signalled: the mark to wait after.
    func mark(_ user: String) -> UInt64 {
        state.withLock { $0.signals[user] ?? 0 }
    }

    /// An event for `user` was committed: wakes the user's waiters.
    func signal(_ user: String) {
        let woken: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.signals[user, default: 0] &+= 1
            state.signals[Self.everyone, default: 0] &+= 1
            var woken: [CheckedContinuation<Void, Never>] = []
            for (id, waiter) in state.waiters where (waiter.user == user || waiter.user == Self.everyone) && waiter.wake == nil {
                state.waiters[id]?.wake = .event
                if let c = waiter.continuation { woken.append(c); state.waiters[id]?.continuation = nil }
            }
            return woken
        }
        for c in woken { c.resume() }
    }

    /// The number of waits in progress (for tests).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Waits until an event for `user` is committed after `mark` (`.event`), or `timeout` passes,
    /// the server begins a graceful shutdown, or the task is cancelled (`.over`), whichever is
    /// first. Answers `.event` at once when a signal came after `mark` already.
    func wait(for user: String, after mark: UInt64, timeout: Duration) async -> Wake {
        let id: UInt64 = state.withLock { state in
            state.nextID &+= 1
            state.waiters[state.nextID] = Waiter(user: user, mark: mark, wake: (state.signals[user] ?? 0) > mark ? .event : nil)
            return state.nextID
        }
        defer { _ = state.withLock { $0.waiters.removeValue(forKey: id) } }
        // Graceful shutdown of the HTTP server reaches the request's task (a child of the server
        // service), and ends the wait at once rather than hold the shutdown for `timeout`.
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await Task.sleep(for: timeout) }
                group.addTask { await self.suspend(id) }
                await group.next()
                self.end(id, .over)
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.end(id, .over)
        }
        return state.withLock { $0.waiters[id]?.wake } ?? .over
    }

    /// Ends waiter `id` with `wake`, unless it has ended already.
    private func end(_ id: UInt64, _ wake: Wake) {
        let c: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard let waiter = state.waiters[id], waiter.wake == nil || waiter.continuation != nil else { return nil }
            if waiter.wake == nil { state.waiters[id]?.wake = wake }
            state.waiters[id]?.continuation = nil
            return waiter.continuation
        }
        c?.resume()
    }

    /// Suspends until waiter `id` has ended (or at once when it has, or the task is cancelled).
    private func suspend(_ id: UInt64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = state.withLock { state in
                    guard let waiter = state.waiters[id], waiter.wake == nil, !Task.isCancelled else { return true }
                    state.waiters[id]?.continuation = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            self.end(id, .over)
        }
    }
}

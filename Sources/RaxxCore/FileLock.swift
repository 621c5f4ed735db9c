import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive advisory lock (flock) on a file, held until released or deinitialised: one
/// process at a time renews the session (keystore.lock), refreshes the cache (refresh.lock) or
/// places and settles orders (orders.lock).
public final class FileLock: @unchecked Sendable {
    private let lock = NSLock()
    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Takes the lock on `path` (created 0600 if missing, its folders made and checked and a
    /// link at its name refused, as `folders` has them), waiting up to `wait` for its holder to
    /// let go; `busy` is thrown when it does not in time (nil: do not wait at all).
    public static func acquire(
        path: String, in folders: PrivateFolders, wait: RaxxDuration?,
        busy: @autoclosure () -> RaxxError
    ) async throws -> FileLock {
        guard let fd = try folders.open(path, O_RDWR | O_CREAT) else {
            throw RaxxError(code: .lockUnavailable, message: "Could not open the lock file \(path).")
        }
        let deadline = ContinuousClock.now + .milliseconds(wait?.milliseconds ?? 0)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                close(fd)
                throw busy()
            }
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                close(fd)
                throw error
            }
        }
        return FileLock(fd: fd)
    }

    /// Lets go (also done on deinit).
    public func release() {
        lock.lock()
        defer { lock.unlock() }
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
        fd = -1
    }

    deinit { release() }
}

/// A lock someone holds until `release()` (or until it is deinitialised).
public protocol HeldLock: AnyObject, Sendable {
    func release()
}

extension FileLock: HeldLock {}

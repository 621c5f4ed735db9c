import Foundation

/// A clock tests move by hand, shared by a sandbox and a client so expiry needs no sleeping.
public final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date()) { current = start }

    public var now: Date { lock.lock(); defer { lock.unlock() }; return current }

    public func advance(by seconds: TimeInterval) {
        lock.lock(); current = current.addingTimeInterval(seconds); lock.unlock()
    }

    /// The clock as the closures the libraries take.
    public var closure: @Sendable () -> Date { { [self] in now } }
}

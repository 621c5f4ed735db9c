import Foundation
import Synchronization

/// A clock tests move by hand, shared by a sandbox and a client so expiry needs no sleeping.
public final class TestClock: Sendable {
    private let current: Mutex<Date>

    public init(_ start: Date = Date()) { current = Mutex(start) }

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// The clock as the closures the libraries take.
    public var closure: @Sendable () -> Date { { [self] in now } }
}

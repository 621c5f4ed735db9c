/// Capped exponential backoff with full jitter, for loops that wait for the network to come back
/// (raxx-notify watch, raxx-order watch): each wait is somewhere between a quarter second and the
/// current bound, so many clients do not return at once, and the bound doubles up to `maximum`.
public struct Backoff: Sendable, Equatable {
    public let initial: Duration
    public let maximum: Duration
    /// The bound of the next wait.
    public private(set) var bound: Duration

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(30)) {
        self.initial = initial
        self.maximum = maximum
        bound = initial
    }

    /// The next wait (jittered), doubling the bound for the one after.
    public mutating func next() -> Duration {
        let ceiling = max(250, Int64(bound / .milliseconds(1)))
        let wait = Duration.milliseconds(Int64.random(in: min(250, ceiling)...ceiling))
        bound = min(bound * 2, maximum)
        return wait
    }

    /// Back to the first bound (after a success).
    public mutating func reset() { bound = initial }
}

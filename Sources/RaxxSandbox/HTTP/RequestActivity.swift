import Hummingbird
import Synchronization

/// When the sandbox last heard a request. Background work that holds the database (an erasure's
/// chunks) gives way while requests keep coming: on a small machine its chunks otherwise take a
/// core from the requests, and other accounts' orders wait for the CPU rather than for the lock.
public final class RequestActivity: Sendable {
    private let last = Mutex<ContinuousClock.Instant?>(nil)

    public init() {}

    func note(at instant: ContinuousClock.Instant = .now) {
        last.withLock { $0 = instant }
    }

    /// Whether a request came in during the last `window`.
    func heard(within window: Duration, now: ContinuousClock.Instant = .now) -> Bool {
        last.withLock { $0.map { now - $0 < window } ?? false }
    }
}

/// Notes every request's arrival in `activity`.
struct ActivityMiddleware<Context: RequestContext>: RouterMiddleware {
    let activity: RequestActivity

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        activity.note()
        return try await next(request, context)
    }
}

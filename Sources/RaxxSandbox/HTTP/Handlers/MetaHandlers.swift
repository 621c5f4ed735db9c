import Foundation
import RaxxAPI
import RaxxCore

/// The `meta` tag: health.
struct MetaHandlers: Sendable {
    let health: HealthStore
    let clock: @Sendable () -> Date

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        // A health check that cannot read its database is not healthy.
        try await health.ping()
        return .ok(.init(body: .json(.init(status: .ok, version: RaxxVersion.current, time: clock()))))
    }
}

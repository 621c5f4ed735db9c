import Foundation
import RaxxAPI

/// The `audit` tag: the caller's own audit trail (staff read anyone's through the `dsr` tag).
struct AuditHandlers: Sendable {
    let trail: AuditTrailStore

    func listAuditEvents(_ input: Operations.ListAuditEvents.Input, caller: Caller) async throws -> Operations.ListAuditEvents.Output {
        let cursor = input.query.cursor ?? 0
        let page = try await trail.trail(
            of: AuditSubject(userID: caller.userID, accountID: caller.accountID), after: cursor,
            limit: input.query.limit ?? 100, seenBySubject: true)
        return .ok(.init(body: .json(.init(events: page.events, cursor: page.events.last?.seq ?? cursor, hasMore: page.hasMore))))
    }
}

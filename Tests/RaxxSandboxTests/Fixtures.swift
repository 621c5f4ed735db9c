import Foundation
import GRDB
import RaxxAPI

@testable import RaxxSandbox

/// Signs `email` in without a passkey (creating the account): a test fixture.
func signedInGrant(
    _ database: SandboxDatabase, email: String, configuration: SandboxConfiguration = SandboxConfiguration(),
    now: Date = Date()
) async throws -> Components.Schemas.SessionGrant {
    let account = try await database.writer.write { db in try Accounts.findOrCreate(db, email: email, at: now, actor: "test") }
    let mint = SessionMint(configuration: configuration)
    let minted = mint.mint(now: now, method: "test")
    let apiAccount = try await database.stores.sessions.start(minted.session, userID: account.userID, now: now)
    return mint.grant(minted, account: apiAccount)
}

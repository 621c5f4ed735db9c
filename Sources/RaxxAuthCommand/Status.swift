import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore
import RaxxVault

extension RaxxAuth {
    /// `raxx-auth status`: the session as the keystore knows it, offline.
    public struct Status: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.offlineCapable
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            abstract: "Show whether this device is signed in.",
            discussion: """
            Reads the keystore alone: the account, when the access token and the session expire, where the \
            keystore is and which authenticator holds the passkey. Exits 0 when signed in and 4 when not. 
            """ + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let contents = try context.keystore.load()
            let now = context.clock()
            let live = contents.session.flatMap { $0.sessionExpiresAt > now ? $0 : nil }
            let record = SessionRecord(
                signedIn: live != nil, account: live?.email ?? contents.credential?.email, accountID: live?.accountID,
                accessExpiresAt: live?.accessExpiresAt, sessionExpiresAt: live?.sessionExpiresAt,
                keystore: context.keystore.location, passkey: contents.credential != nil,
                authenticator: contents.credential == nil ? nil : SoftwareAuthenticator.kind)
            try record.emit(in: context)
            guard live != nil else {
                if let over = contents.session {
                    throw RaxxError(code: "sign_in_required", message: "The session ended at \(RFC3339.string(from: over.sessionExpiresAt)).",
                                    hint: "Sign in again: raxx-auth login", status: .signInRequired)
                }
                throw RaxxError(code: "sign_in_required", message: "Not signed in.",
                                hint: contents.credential == nil ? "Create a passkey: raxx-auth register --email you@example.com"
                                                                 : "Sign in: raxx-auth login",
                                status: .signInRequired)
            }
        }
    }
}

/// What `register`, `login` and `status` print: never a token.
struct SessionRecord: Encodable {
    var signed_in: Bool
    var account: String?
    var account_id: String?
    var access_expires_at: Date?
    var session_expires_at: Date?
    var keystore: String
    var passkey: Bool
    var authenticator: String?

    init(signedIn: Bool, account: String?, accountID: String?, accessExpiresAt: Date?, sessionExpiresAt: Date?,
         keystore: String, passkey: Bool, authenticator: String?) {
        signed_in = signedIn
        self.account = account
        account_id = accountID
        access_expires_at = accessExpiresAt
        session_expires_at = sessionExpiresAt
        self.keystore = keystore
        self.passkey = passkey
        self.authenticator = authenticator
    }

    init(_ session: StoredSession, context: CommandContext) {
        self.init(signedIn: true, account: session.email, accountID: session.accountID, accessExpiresAt: session.accessExpiresAt,
                  sessionExpiresAt: session.sessionExpiresAt, keystore: context.keystore.location, passkey: true,
                  authenticator: SoftwareAuthenticator.kind)
    }

    func emit(in context: CommandContext) throws {
        try context.emit([self], columns: [.init("Signed in"), .init("Account"), .init("Access until"), .init("Session until")]) {
            [$0.signed_in ? "yes" : "no", $0.account ?? "-",
             $0.access_expires_at.map(RFC3339.string) ?? "-", $0.session_expires_at.map(RFC3339.string) ?? "-"]
        }
    }
}

import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore
import RaxxVault
import RaxxWire

extension RaxxAuth {
    /// `raxx-auth status`: the session as the keystore knows it, offline.
    public struct Status: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.offlineCapable
        public static let tool = "raxx-auth"
        public static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show whether this device is signed in.",
            discussion: """
                Reads the keystore alone: one record per server this device holds a passkey or session for, the \
                configured one (RAXX_API_URL) first: the account, when the access token and the session expire, \
                where the keystore is and which authenticator holds the passkey. Exits 0 when signed in to the \
                configured server and 4 when not. 
                """ + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            try await Self.report(context)
        }

        /// The logic, which needs none of the parsed options (the output format is the context's).
        static func report(_ context: CommandContext) async throws {
            let contents = try context.keystore.load()
            let now = context.clock()
            // The configured server first, then every other server this device holds anything for.
            let origins = [context.origin] + contents.servers.keys.filter { $0 != context.origin }.sorted()
            let records = origins.map { origin in
                let entry = contents[origin]
                let live = entry.session.flatMap { $0.sessionExpiresAt > now ? $0 : nil }
                return SessionRecord(
                    server: origin, signedIn: live != nil, account: live?.email ?? entry.credential?.email, accountID: live?.accountID,
                    accessExpiresAt: live?.accessExpiresAt, sessionExpiresAt: live?.sessionExpiresAt,
                    keystore: context.keystore.location, passkey: entry.credential != nil,
                    authenticator: entry.credential == nil ? nil : SoftwareAuthenticator.kind)
            }
            try SessionRecord.emit(records, in: context)
            let current = contents[context.origin]
            guard let session = current.session, session.sessionExpiresAt > now else {
                if let over = current.session {
                    throw RaxxError(
                        code: .signInRequired, message: "The session at \(context.origin) ended at \(context.peopleMoment(over.sessionExpiresAt)).",
                        hint: "Sign in again: raxx-auth login")
                }
                throw RaxxError(
                    code: .signInRequired, message: "Not signed in to \(context.origin).",
                    hint: current.credential == nil
                        ? "Create a passkey: raxx-auth register --email you@example.com"
                        : "Sign in: raxx-auth login")
            }
        }
    }
}

/// What `register`, `login` and `status` print: never a token.
struct SessionRecord: Encodable, JSONLineWritable {
    var server: String
    var signed_in: Bool
    var account: String?
    var account_id: String?
    var access_expires_at: Date?
    var session_expires_at: Date?
    var keystore: String
    var passkey: Bool
    var authenticator: String?

    init(
        server: String, signedIn: Bool, account: String?, accountID: String?, accessExpiresAt: Date?, sessionExpiresAt: Date?,
        keystore: String, passkey: Bool, authenticator: String?
    ) {
        self.server = server
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
        self.init(
            server: context.origin, signedIn: true, account: session.email, accountID: session.accountID, accessExpiresAt: session.accessExpiresAt,
            sessionExpiresAt: session.sessionExpiresAt, keystore: context.keystore.location, passkey: true,
            authenticator: SoftwareAuthenticator.kind)
    }

    func emit(in context: CommandContext) throws { try Self.emit([self], in: context) }

    func write(to json: inout JSONLineWriter) {
        json.add("access_expires_at", access_expires_at)
        json.add("account", account)
        json.add("account_id", account_id)
        json.add("authenticator", authenticator)
        json.add("keystore", keystore)
        json.add("passkey", passkey)
        json.add("server", server)
        json.add("session_expires_at", session_expires_at)
        json.add("signed_in", signed_in)
    }

    static func emit(_ records: [SessionRecord], in context: CommandContext) throws {
        try context.emit(records, columns: [.init("Server"), .init("Signed in"), .init("Account"), .init("Access until"), .init("Session until")]) {
            [
                $0.server, $0.signed_in ? "yes" : "no", $0.account ?? "-",
                $0.access_expires_at.map(context.peopleTime) ?? "-", $0.session_expires_at.map(context.peopleTime) ?? "-",
            ]
        }
    }
}

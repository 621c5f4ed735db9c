import RaxxCore

/// What the session and the ceremonies need of a keystore: read it, seal it again, remove it, and
/// hold its lock across a read-modify-write. `Keystore` is the sealed file on this device; tests
/// give an in-memory one.
public protocol KeystoreAccess: Sendable {
    /// Where it is, for messages and `raxx-auth status`.
    var location: String { get }
    /// When it last changed (nil when there is none): without unsealing it, a caller can tell
    /// whether it changed since something it wrote (the account marker, see `LocalAccounts`).
    var changedAt: ChangeStamp? { get }
    /// The contents, or empty contents when there is no keystore yet.
    func load() throws(RaxxError) -> KeystoreContents
    func save(_ contents: KeystoreContents) throws(RaxxError)
    /// Removes the keystore (the device secret stays).
    func destroy() throws(RaxxError)
    /// Runs `body` holding the keystore's lock, so that two processes never interleave their
    /// read-modify-write (two cron jobs renewing the session, say).
    func withLock<T>(_ body: () async throws -> T) async throws -> T
}

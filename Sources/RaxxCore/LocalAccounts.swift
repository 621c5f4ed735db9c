import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Whose data this device keeps for one server. Everything a device keeps of an account — the
/// cache, the order journal, the alerts and their cursors — lives in that account's own folders,
/// so what one account fetched is never shown to another signed in on the same device. The
/// account whose data is shown is the one last signed in here, named in a small file beside the
/// keystore (`state/<server>/account`): an offline read learns it without unsealing the keystore.
public protocol LocalAccounts: Sendable {
    /// The account last signed in here, with when the marker naming it was last written or
    /// confirmed (nil when none was, or it was forgotten since).
    func marked() throws(RaxxError) -> (account: String, at: ChangeStamp)?
    /// The marker was found to name the account the keystore holds, as of now: its stamp moves
    /// on, so that later runs trust it without unsealing the keystore. Best effort: a marker that
    /// cannot be touched only keeps the slower path.
    func confirm()
    /// `accountID` signed in here: its data is the one kept and shown from now on. The first
    /// account a device adopts for a server takes over what a version that kept one set of files
    /// per server left there (see `FileLocalAccounts.takeOverUnkeyedFiles`): with
    /// `sessionKeptFromBefore`, the session this device already held (the account that used those
    /// files), its alerts and watch's cursor too; after a new sign-in, those go.
    func adopt(_ accountID: String, sessionKeptFromBefore: Bool) throws(RaxxError)
    /// Removes everything this device keeps of `accountID` at this server (its cache, order
    /// journal, alerts and cursors), and forgets it was signed in here.
    func forget(_ accountID: String) throws(RaxxError)
}

extension LocalAccounts {
    /// The account last signed in to this server on this device (nil when none was, or it was
    /// forgotten since).
    public func current() throws(RaxxError) -> String? { try marked()?.account }
}

/// When a file last changed, as the file system keeps it (its modification time): the marker's and
/// the keystore's are compared to tell whether the marker was written after the keystore last
/// changed. In-memory doubles count instead.
public struct ChangeStamp: Sendable, Comparable {
    public var seconds: Int
    public var nanoseconds: Int

    public init(seconds: Int, nanoseconds: Int) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The modification time of the file at `path`, or nil when there is none.
    public static func ofFile(_ path: String) -> ChangeStamp? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return ChangeStamp(info)
    }

    init(_ info: stat) {
        self.init(seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
    }

    public static func < (a: ChangeStamp, b: ChangeStamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }
}

/// Where one server's accounts keep their files: `state/<server>/accounts/<account>/` (the order
/// journal, the alerts) and `cache/<server>/accounts/<account>/` (the cache), with the locks of
/// each store beside it.
public struct AccountFolders: Sendable, Equatable {
    /// `state/<server>`: the keystore's server folder.
    public let stateServerPath: String
    /// `cache/<server>`.
    public let cacheServerPath: String

    public init(_ configuration: RaxxConfiguration) {
        let key = configuration.endpoint.storageKey
        stateServerPath = RaxxConfiguration.joined(configuration.stateDirectoryPath, key)
        cacheServerPath = RaxxConfiguration.joined(configuration.cacheDirectoryPath, key)
    }

    /// The file naming the account last signed in here.
    public var markerPath: String { RaxxConfiguration.joined(stateServerPath, "account") }

    /// `accountID`'s state folder (journal, alerts).
    public func statePath(_ accountID: String) -> String {
        RaxxConfiguration.joined(RaxxConfiguration.joined(stateServerPath, "accounts"), Self.folderName(accountID))
    }

    /// `accountID`'s cache folder.
    public func cachePath(_ accountID: String) -> String {
        RaxxConfiguration.joined(RaxxConfiguration.joined(cacheServerPath, "accounts"), Self.folderName(accountID))
    }

    /// An account ID as a folder name: letters, digits, `-` and `_` as they are, any other byte
    /// as `%XX` (so no ID names `.`, `..` or a path), and an ID too long for a file name by its
    /// SHA-256. Two IDs never share a folder.
    public static func folderName(_ accountID: String) -> String {
        var name = ""
        for byte in accountID.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                name += "%" + ASCIIHex.lowercase(CollectionOfOne(byte)).uppercased()
            }
        }
        if name.isEmpty { return "%" }
        guard name.utf8.count <= 128 else { return "sha256-" + ASCIIHex.lowercase(SHA256.hash(data: Array(accountID.utf8))) }
        return name
    }

    /// The files a version that kept one set per server left in the server folders, by the store
    /// they belong to: the journal and the cache carry the account of each of their rows and
    /// refuse another's, so they move into the first account adopted here; the alerts carry
    /// none, so they move only with the session that used them, and are removed otherwise (the
    /// next `raxx-notify list` fetches them again).
    static let unkeyedJournal = "orders.sqlite", unkeyedCache = "cache.sqlite", unkeyedAlerts = "alerts.sqlite"
    static let sqliteSuffixes = ["", "-wal", "-shm"]
}

/// The live `LocalAccounts`: the marker file and the account folders on disk, each made, opened
/// and removed under `PrivateFolders`' rule.
public struct FileLocalAccounts: LocalAccounts {
    public let folders: AccountFolders
    let privateFolders: PrivateFolders

    public init(_ configuration: RaxxConfiguration) {
        folders = AccountFolders(configuration)
        privateFolders = PrivateFolders(configuration)
    }

    public func marked() throws(RaxxError) -> (account: String, at: ChangeStamp)? {
        guard let fd = try privateFolders.open(folders.markerPath, O_RDONLY) else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.failure("Could not read \(folders.markerPath)") }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var count = 0
        while count < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw Self.failure("Could not read \(folders.markerPath)") }
            if n == 0 { break }
            count += n
        }
        // The line's end dropped by hand: Foundation's trimming costs an offline read a tenth of
        // its time in type lookups.
        while count > 0, buffer[count - 1] == UInt8(ascii: "\n") || buffer[count - 1] == UInt8(ascii: "\r") { count -= 1 }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        return text.isEmpty ? nil : (text, ChangeStamp(info))
    }

    public func confirm() {
        _ = utimensat(AT_FDCWD, folders.markerPath, nil, AT_SYMLINK_NOFOLLOW)
    }

    public func adopt(_ accountID: String, sessionKeptFromBefore: Bool) throws(RaxxError) {
        let previous = try current()
        guard previous != accountID else { return }
        try privateFolders.folder(folders.stateServerPath)
        try writeAtomically(Array((accountID + "\n").utf8), to: folders.markerPath)
        if previous == nil { try takeOverUnkeyedFiles(for: accountID, withAlerts: sessionKeptFromBefore) }
    }

    public func forget(_ accountID: String) throws(RaxxError) {
        // A link planted at either folder (or anywhere in them) goes itself; what it points to stays.
        for path in [folders.statePath(accountID), folders.cachePath(accountID)] { try privateFolders.remove(path) }
        if try current() == accountID { try privateFolders.remove(folders.markerPath) }
    }

    /// Moves what an earlier version kept per server into `accountID`'s folders (the journal and
    /// the cache, which check the account of their rows themselves), and its alerts (which carry
    /// no account) `withAlerts` (the session that used them is this account's: its watch goes on
    /// from its cursor instead of replaying every alert into a push pipeline), else removes them.
    /// A file already in the account's folder is never replaced, and a link is never moved.
    func takeOverUnkeyedFiles(for accountID: String, withAlerts: Bool) throws(RaxxError) {
        var moves = [
            (folders.stateServerPath, folders.statePath(accountID), AccountFolders.unkeyedJournal),
            (folders.cacheServerPath, folders.cachePath(accountID), AccountFolders.unkeyedCache),
        ]
        if withAlerts { moves.append((folders.stateServerPath, folders.statePath(accountID), AccountFolders.unkeyedAlerts)) }
        for (from, to, name) in moves {
            let source = RaxxConfiguration.joined(from, name), target = RaxxConfiguration.joined(to, name)
            guard try privateFolders.file(source, create: false), access(source, F_OK) == 0 else { continue }
            try privateFolders.file(target)
            guard access(target, F_OK) != 0 else { continue }
            for suffix in AccountFolders.sqliteSuffixes where access(source + suffix, F_OK) == 0 {
                try PrivateFolders.refuseLink(atFile: source + suffix)
                guard rename(source + suffix, target + suffix) == 0 else { throw Self.failure("Could not move \(source + suffix) to \(to)") }
            }
        }
        for suffix in AccountFolders.sqliteSuffixes {
            try privateFolders.remove(RaxxConfiguration.joined(folders.stateServerPath, AccountFolders.unkeyedAlerts) + suffix)
        }
    }

    /// Writes `bytes` to `path` (0600) through a temporary file renamed over it.
    func writeAtomically(_ bytes: [UInt8], to path: String) throws(RaxxError) {
        let temporary = path + ".tmp-\(getpid())"
        guard let fd = try privateFolders.open(temporary, O_WRONLY | O_CREAT | O_TRUNC) else { throw Self.failure("Could not write \(path)") }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                close(fd)
                unlink(temporary)
                throw Self.failure("Could not write \(path)")
            }
            offset += n
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw Self.failure("Could not write \(path)")
        }
    }

    static func failure(_ what: String) -> RaxxError {
        RaxxError(code: .localDataUnwritable, message: "\(what): \(String(cString: strerror(errno))).")
    }
}

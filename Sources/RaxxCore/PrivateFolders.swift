import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The one rule for every folder and file the tools keep, as OpenSSH's StrictModes and GnuPG's
/// check of its home folder hold theirs: from each root down (`RAXX_HOME`, or `XDG_STATE_HOME` and
/// `XDG_CACHE_HOME`: `RaxxConfiguration.privateRootPaths`), every folder is the user's own and
/// writable by no one else, and nothing below a root is followed if it is a symbolic link. Another
/// local user who could write one of those folders, or plant a link in one, could otherwise have a
/// tool read a database of theirs as the user's positions, write the user's files where they can
/// read them, or delete a folder of the user's elsewhere.
///
/// A root itself is followed when it is a link (the user named it), and checked where it leads.
/// Below it, each component is read with `lstat`, files are opened with `O_NOFOLLOW` and their mode
/// set on the open descriptor (`fchmod`), and a removal never goes through a link. Once every
/// folder on the way is the user's own and no one else's to write, no one else can plant a link
/// in them afterwards either: the checks right before a use hold until it.
///
/// Every refusal is exit 77 (`.notPermitted`, code `unsafe_folder`), naming the path and what
/// fixes it.
public struct PrivateFolders: Sendable, Equatable {
    /// The folders the rule starts at, as absolute paths without a trailing slash.
    public let roots: [String]

    public init(roots: [String]) {
        self.roots = roots.map { path in
            var path = path
            while path.count > 1, path.hasSuffix("/") { path.removeLast() }
            return path
        }
    }

    /// The rule for `configuration`'s state and cache folders.
    public init(_ configuration: RaxxConfiguration) { self.init(roots: configuration.privateRootPaths) }

    public static let code = ErrorCode.unsafeFolder

    /// Checks the folder at `path` and every folder from its root down to it; missing ones are
    /// made (0700) when `create`. Answers whether the folder exists (false, with nothing made,
    /// when it or one above it is missing and not `create`).
    @discardableResult
    public func folder(_ path: String, create: Bool = true) throws(RaxxError) -> Bool {
        let (root, names) = try Self.split(path, roots: roots)
        guard try Self.checkRoot(root, create: create) else { return false }
        var current = root
        for name in names {
            current = RaxxConfiguration.joined(current, name)
            var info = stat()
            if lstat(current, &info) != 0 {
                guard errno == ENOENT else { throw Self.failure("Could not look at \(current)") }
                guard create else { return false }
                // mkdir never follows a link at the name: one planted there fails it (EEXIST).
                guard mkdir(current, 0o700) == 0 || errno == EEXIST, lstat(current, &info) == 0 else {
                    throw Self.failure("Could not create \(current)")
                }
            }
            try Self.check(folder: current, info)
        }
        return true
    }

    /// Checks `path`'s folder (as `folder(_:create:)`) and the name itself: absent, or a regular
    /// file (never a link). Answers whether the folder exists.
    @discardableResult
    public func file(_ path: String, create: Bool = true) throws(RaxxError) -> Bool {
        guard try folder(Self.parent(of: path), create: create) else { return false }
        try Self.refuseLink(atFile: path)
        return true
    }

    /// Opens the file at `path` with `flags` (checked as `file(_:create:)`; made when `flags` has
    /// `O_CREAT`), never through a link at its name (`O_NOFOLLOW`), and brings it to 0600 on the
    /// open descriptor whatever the umask or an older version left. Answers the descriptor, or
    /// nil when the file (or its folder) does not exist and `flags` has no `O_CREAT`.
    public func open(_ path: String, _ flags: Int32) throws(RaxxError) -> Int32? {
        let create = flags & O_CREAT != 0
        guard try file(path, create: create) else { return nil }
        let fd = Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == ELOOP { throw Self.link(path) }
            if errno == ENOENT, !create { return nil }
            throw Self.failure("Could not open \(path)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else {
            close(fd)
            throw Self.unsafe("\(path) is not a file of this user's; refusing to use it.", hint: Self.moveAside(path))
        }
        if flags & O_ACCMODE != O_RDONLY, info.st_mode & 0o777 != 0o600 { _ = fchmod(fd, 0o600) }
        return fd
    }

    /// Removes what is at `path` (below a root, its folders checked first): a link itself, never
    /// what it points to; a folder with everything in it, walked by descriptor without ever
    /// descending through a link. Nothing there is not an error.
    public func remove(_ path: String) throws(RaxxError) {
        let parent = Self.parent(of: path), name = Self.lastComponent(of: path)
        guard try folder(parent, create: false) else { return }
        let parentFD = Glibc.open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parentFD >= 0 else { throw Self.failure("Could not open \(parent)") }
        defer { close(parentFD) }
        try Self.remove(name, in: parentFD, shownAs: path)
    }

    /// Refuses anything but a regular file at `path` (a link above all), without looking through
    /// it; nothing there is fine. For names the stores open through a library (SQLite's database,
    /// its `-wal` and `-shm`), right before it opens them.
    public static func refuseLink(atFile path: String) throws(RaxxError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            guard errno == ENOENT else { throw failure("Could not look at \(path)") }
            return
        }
        if info.st_mode & S_IFMT == S_IFLNK { throw link(path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw unsafe("\(path) is not a file; refusing to use it.", hint: moveAside(path))
        }
        guard info.st_uid == geteuid() else {
            throw unsafe("\(path) belongs to another user; refusing to use it.", hint: moveAside(path))
        }
    }

    /// Brings the regular file at `path` to 0600 by its path, after refusing a link or another's
    /// file there (`refuseLink(atFile:)`); nothing there is fine. For a file this process may hold
    /// POSIX locks on (SQLite's), which closing any descriptor of it would drop: in a folder the
    /// rule holds, no one else can swap the name between the check and the change.
    public static func narrow(_ path: String) throws(RaxxError) {
        try refuseLink(atFile: path)
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & 0o777 != 0o600 else { return }
        guard chmod(path, 0o600) == 0 else { throw failure("Could not make \(path) private") }
    }

    /// `path` (checked as `folder` or `file` had it) with its root's links resolved: a path
    /// without a single link, for an open that refuses every one on the way (SQLite's
    /// `SQLITE_OPEN_NOFOLLOW` refuses links above the root too, which the rule allows).
    public func resolved(_ path: String) throws(RaxxError) -> String {
        let (root, names) = try Self.split(path, roots: roots)
        guard let real = realpath(root, nil) else { throw Self.failure("Could not look at \(root)") }
        defer { free(real) }
        return names.reduce(String(cString: real)) { RaxxConfiguration.joined($0, $1) }
    }

    // MARK: The checks

    /// A root: followed if a link, made (with the folders above it, 0700) when missing and
    /// `create`, and checked as every folder below it.
    static func checkRoot(_ root: String, create: Bool) throws(RaxxError) -> Bool {
        var info = stat()
        if stat(root, &info) != 0 {
            guard errno == ENOENT else { throw failure("Could not look at \(root)") }
            guard create else { return false }
            do {
                try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw RaxxError(code: .localDataUnwritable, message: "Could not create \(root): \(error.localizedDescription)")
            }
            guard stat(root, &info) == 0 else { throw failure("Could not look at \(root)") }
        }
        try check(folder: root, info)
        return true
    }

    /// One folder, as `lstat` (or, for a root, `stat`) found it.
    static func check(folder path: String, _ info: stat) throws(RaxxError) {
        if info.st_mode & S_IFMT == S_IFLNK { throw link(path) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw unsafe("\(path) is not a folder; refusing to use it.", hint: moveAside(path))
        }
        guard info.st_uid == geteuid() else {
            throw unsafe("\(path) belongs to another user; refusing to use it.", hint: moveAside(path))
        }
        // Group-writable is fine for the user's private group (umask 002 on systems that give each
        // user a group of their own), as Debian's OpenSSH allows it: no one else is in it.
        guard info.st_mode & 0o002 == 0, info.st_mode & 0o020 == 0 || isPrivateGroup(info.st_gid) else {
            throw unsafe("\(path) can be written by other users; refusing to use it.", hint: "Fix it with: chmod go-w \(path)")
        }
    }

    /// `gid` is the user's private group: their primary group, named as they are, with no other
    /// member. (The group and password databases are read only on this rare path.)
    public static func isPrivateGroup(_ gid: gid_t) -> Bool {
        guard let user = getpwuid(geteuid()), user.pointee.pw_gid == gid, let group = getgrgid(gid) else { return false }
        let name = String(cString: user.pointee.pw_name)
        guard String(cString: group.pointee.gr_name) == name else { return false }
        var member = group.pointee.gr_mem
        while let entry = member?.pointee {
            guard String(cString: entry) == name else { return false }
            member = member?.advanced(by: 1)
        }
        return true
    }

    /// `name` in the folder open at `folderFD`: a folder emptied first (each entry by `fstatat`
    /// without following, each subfolder opened `O_NOFOLLOW`), anything else unlinked.
    static func remove(_ name: String, in folderFD: Int32, shownAs path: String) throws(RaxxError) {
        var info = stat()
        guard fstatat(folderFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            guard errno == ENOENT else { throw failure("Could not look at \(path)") }
            return
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            let fd = openat(folderFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw failure("Could not open \(path)") }
            guard let listing = fdopendir(fd) else {
                close(fd)
                throw failure("Could not open \(path)")
            }
            defer { closedir(listing) }  // closes fd
            var names: [String] = []
            while let entry = readdir(listing) {
                let entryName = withUnsafePointer(to: &entry.pointee.d_name) {
                    String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
                }
                if entryName != ".", entryName != ".." { names.append(entryName) }
            }
            for entryName in names { try remove(entryName, in: fd, shownAs: RaxxConfiguration.joined(path, entryName)) }
            guard unlinkat(folderFD, name, AT_REMOVEDIR) == 0 || errno == ENOENT else { throw failure("Could not remove \(path)") }
        } else {
            guard unlinkat(folderFD, name, 0) == 0 || errno == ENOENT else { throw failure("Could not remove \(path)") }
        }
    }

    // MARK: Paths

    /// The root `path` is under, and the names from it down to `path`.
    static func split(_ path: String, roots: [String]) throws(RaxxError) -> (root: String, names: [String]) {
        for root in roots {
            if path == root { return (root, []) }
            let prefix = root == "/" ? "/" : root + "/"
            guard path.hasPrefix(prefix) else { continue }
            let names = path.dropFirst(prefix.count).split(separator: "/").map(String.init)
            guard !names.contains(where: { $0 == "." || $0 == ".." }) else { break }
            return (root, names)
        }
        throw RaxxError(code: .internal, message: "\(path) is not inside the tools' folders (\(roots.joined(separator: ", "))).")
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func lastComponent(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    // MARK: Errors

    static func unsafe(_ message: String, hint: String) -> RaxxError {
        RaxxError(code: .unsafeFolder, message: message, hint: hint)
    }

    static func link(_ path: String) -> RaxxError {
        unsafe(
            "\(path) is a symbolic link; refusing to follow it.",
            hint: "Remove the link (rm \(path)), and look at who made it: the tools never make one.")
    }

    static func moveAside(_ path: String) -> String {
        "Move it aside (mv \(path) \(path).suspect); the tools make their own in its place."
    }

    static func failure(_ what: String) -> RaxxError {
        RaxxError(code: .localDataUnwritable, message: "\(what): \(String(cString: strerror(errno))).")
    }
}

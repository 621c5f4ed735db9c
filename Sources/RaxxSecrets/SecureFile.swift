import Foundation
import RaxxCore

#if canImport(Glibc)
    import Glibc
#endif

/// Files that hold secrets: mode 0600 in a 0700 folder, written atomically (temporary file, fsync,
/// rename), and refused when group or others may read or write them. Their folders are made and
/// checked under `PrivateFolders`' rule, and no link is followed at their names.
public enum SecureFile {
    /// Makes (0700) or checks the folder at `dir` and every one above it to its root, as
    /// `folders` has them, then refuses it when group or others may read it.
    public static func ensureDirectory(_ dir: URL, in folders: PrivateFolders) throws(RaxxError) {
        try folders.folder(dir.path)
        try checkPrivate(dir, isDirectory: true)
    }

    /// Refuses a file or folder that group or others can read or write, saying how to fix it; a
    /// link at a file's name is refused (exit 77), never looked through.
    public static func checkPrivate(_ url: URL, isDirectory: Bool = false) throws(RaxxError) {
        try checkPrivate(path: url.path, isDirectory: isDirectory)
    }

    /// The same by path: a read of the keystore makes no URL (URL's path handling costs a start-up
    /// a conformance look-up of its own).
    public static func checkPrivate(path: String, isDirectory: Bool = false) throws(RaxxError) {
        if !isDirectory { try PrivateFolders.refuseLink(atFile: path) }
        var st = stat()
        guard (isDirectory ? stat(path, &st) : lstat(path, &st)) == 0 else { return }
        if st.st_mode & 0o077 != 0 {
            let fix = isDirectory ? "chmod 700 \(path)" : "chmod 600 \(path)"
            throw RaxxError(
                code: .keystorePermissions, message: "\(path) can be read or written by other users; refusing to use it.",
                hint: "Fix it with: \(fix)")
        }
        if st.st_uid != getuid() {
            throw RaxxError(code: .keystorePermissions, message: "\(path) belongs to another user; refusing to use it.")
        }
    }

    /// Whether something is at `path` (a link too: never looked through).
    public static func exists(path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    public static func read(_ url: URL) throws(RaxxError) -> SecretBytes { try read(path: url.path) }

    public static func read(path: String) throws(RaxxError) -> SecretBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ELOOP { try PrivateFolders.refuseLink(atFile: path) }
            throw RaxxError(code: .keystoreUnreadable, message: "Could not read \(path): \(String(cString: strerror(errno))).")
        }
        defer { close(fd) }
        var st = stat()
        fstat(fd, &st)
        let size = Int(st.st_size)
        guard size <= 1 << 20 else { throw RaxxError(code: .keystoreDamaged, message: "\(path) is damaged (too large).") }
        let buffer = SecretBytes(count: size)
        var got = 0
        let ok = buffer.withUnsafeMutableBytes { b -> Bool in
            while got < size {
                let n = Glibc.read(fd, b.baseAddress! + got, size - got)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                got += n
            }
            return true
        }
        guard ok else { throw RaxxError(code: .keystoreUnreadable, message: "Could not read \(path).") }
        return buffer
    }

    /// Writes `bytes` to `url` so that readers see the old file or the new one, never a mix; its
    /// folder made or checked as `folders` has it (`ensureDirectory`). The rename replaces a link
    /// at `url` itself, never what it points to.
    public static func writeAtomically(_ bytes: SecretBytes, to url: URL, in folders: PrivateFolders) throws(RaxxError) {
        let dir = url.deletingLastPathComponent()
        try ensureDirectory(dir, in: folders)
        let temp = dir.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        unlink(temp.path)
        let fd = open(temp.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw RaxxError(code: .keystoreUnwritable, message: "Could not write \(url.path): \(String(cString: strerror(errno))).")
        }
        let written = bytes.withUnsafeBytes { b -> Bool in
            var offset = 0
            while offset < b.count {
                let n = write(fd, b.baseAddress! + offset, b.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard written, synced, rename(temp.path, url.path) == 0 else {
            unlink(temp.path)
            throw RaxxError(code: .keystoreUnwritable, message: "Could not write \(url.path): \(String(cString: strerror(errno))).")
        }
        let dirFD = open(dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        if dirFD >= 0 { fsync(dirFD); close(dirFD) }
    }
}

import Foundation

/// Debian's `age` and `age-keygen` (which Scripts/bootstrap installs), the reference implementation
/// RaxxAge's files are checked against: keys come from `age-keygen`, and what RaxxAge writes is
/// opened by `age -d`, with a key file or with a passphrase typed at its prompt through a pty
/// (`Tests/Interop/age_pty.py`). Missing tools fail the tests with a message saying how to get
/// them; they never skip silently. Each `AgeTool` has a folder of its own (0700) for keys and
/// files, removed when it is freed. It runs child processes: a suite that uses it is `.blocking`.
public final class AgeTool {
    public struct Missing: Error, CustomStringConvertible {
        public var tool: String
        public var description: String {
            "`\(tool)` is not installed, and the age interop tests need it: run Scripts/bootstrap (it installs Debian's package age)."
        }
    }

    /// How a run of `age` or `age-keygen` ended.
    public struct Run: Sendable {
        public var status: Int32
        public var stdout: [UInt8]
        public var stderr: String
    }

    /// `age` or `age-keygen` failed where the test needed it to succeed.
    public struct Failed: Error, CustomStringConvertible {
        public var what: String
        public var run: Run
        public var description: String { "\(what) exited \(run.status): \(run.stderr)" }
    }

    /// A key made by `age-keygen`: the identity file it wrote, and its public key (`age1…`).
    public struct Key: Sendable {
        public var file: URL
        public var recipient: String
    }

    public let age: String
    public let keygen: String
    /// This tool's own folder (0700), removed when it is freed.
    public let folder: URL

    public init() throws {
        age = try Self.find("age")
        keygen = try Self.find("age-keygen")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-age-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// A file in this tool's folder.
    public func path(_ name: String) -> URL { folder.appendingPathComponent(name) }

    public static func find(_ name: String) throws -> String {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") + ["/usr/bin"] {
            let path = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw Missing(tool: name)
    }

    /// The interop helper that types a passphrase at age's prompts through a pty.
    public static let ptyScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/Interop/age_pty.py").path

    // MARK: keys and decryption

    /// A new key from `age-keygen -o` in this tool's folder (`name`.txt); its recipient is read from
    /// the `# public key: age1…` line age-keygen writes above the secret key.
    public func newKey(_ name: String = "key") throws -> Key {
        let file = path("\(name).txt")
        let run = try Self.run(keygen, ["-o", file.path])
        guard run.status == 0 else { throw Failed(what: "age-keygen -o \(file.lastPathComponent)", run: run) }
        let prefix = "# public key: "
        let contents = String(decoding: try Data(contentsOf: file), as: UTF8.self)
        guard let line = contents.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else {
            throw Failed(what: "age-keygen wrote no \"\(prefix)\" line", run: run)
        }
        return Key(file: file, recipient: String(line.dropFirst(prefix.count)))
    }

    /// `age -d -i key` of an age file: its plaintext.
    public func decrypt(file: URL, with key: Key) throws -> [UInt8] {
        // To stdout: age creates an -o file only once it has something to write.
        let run = try Self.run(age, ["-d", "-i", key.file.path, file.path])
        guard run.status == 0 else { throw Failed(what: "age -d -i \(key.file.lastPathComponent) \(file.lastPathComponent)", run: run) }
        return run.stdout
    }

    /// `age -d -i key` of age bytes in memory (written to this tool's folder first).
    public func decrypt(_ sealed: some Collection<UInt8>, with key: Key) throws -> [UInt8] {
        try decrypt(file: try write(sealed), with: key)
    }

    /// `age -d` of a passphrase-encrypted file, the passphrase typed at its prompt: its plaintext.
    public func decrypt(file: URL, passphrase: String) throws -> [UInt8] {
        // Through the pty age's standard output is the terminal, so the plaintext goes to a file,
        // which age creates only once it has something to write: none is an empty plaintext.
        let out = path("opened-\(UUID().uuidString)")
        let run = try runWithPassphrase(passphrase, ["-d", "-o", out.path, file.path])
        guard run.status == 0 else { throw Failed(what: "age -d (a passphrase) \(file.lastPathComponent)", run: run) }
        guard FileManager.default.fileExists(atPath: out.path) else { return [] }
        defer { try? FileManager.default.removeItem(at: out) }
        return Array(try Data(contentsOf: out))
    }

    /// `age -d` with a passphrase, of age bytes in memory (written to this tool's folder first).
    public func decrypt(_ sealed: some Collection<UInt8>, passphrase: String) throws -> [UInt8] {
        try decrypt(file: try write(sealed), passphrase: passphrase)
    }

    private func write(_ bytes: some Collection<UInt8>) throws -> URL {
        let file = path("sealed-\(UUID().uuidString).age")
        guard FileManager.default.createFile(atPath: file.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        return file
    }

    // MARK: running

    @discardableResult
    public static func run(_ executable: String, _ arguments: [String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // Output goes to files, so neither stream can fill a pipe and block the child.
        let folder = FileManager.default.temporaryDirectory
        let outURL = folder.appendingPathComponent("age-out-\(UUID().uuidString)")
        let errURL = folder.appendingPathComponent("age-err-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: outURL.path, contents: nil, attributes: [.posixPermissions: 0o600])
        FileManager.default.createFile(atPath: errURL.path, contents: nil, attributes: [.posixPermissions: 0o600])
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return Run(
            status: process.terminationStatus, stdout: Array(try Data(contentsOf: outURL)),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// age with a passphrase typed at its prompts (through a pty); the passphrase goes in a 0600 file.
    @discardableResult
    public func runWithPassphrase(_ passphrase: String, _ arguments: [String]) throws -> Run {
        let file = path("passphrase-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: file.path, contents: Data(passphrase.utf8), attributes: [.posixPermissions: 0o600])
        defer { try? FileManager.default.removeItem(at: file) }
        return try Self.run("/usr/bin/env", ["python3", Self.ptyScript, file.path, age] + arguments)
    }
}

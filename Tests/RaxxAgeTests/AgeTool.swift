import Foundation
import RaxxAge
import RaxxCore
import Testing

/// Debian's `age` and `age-keygen`, the reference the format is tested against. Missing tools fail
/// the tests with a message saying how to get them; they never skip silently.
struct AgeTool {
    struct Missing: Error, CustomStringConvertible {
        var tool: String
        var description: String {
            "`\(tool)` is not installed, and the age interop tests need it: run Scripts/bootstrap (it installs Debian's package age)."
        }
    }

    struct Run {
        var status: Int32
        var stdout: [UInt8]
        var stderr: String
    }

    let age: String
    let keygen: String

    init() throws {
        age = try Self.find("age")
        keygen = try Self.find("age-keygen")
    }

    static func find(_ name: String) throws -> String {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") + ["/usr/bin"] {
            let path = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw Missing(tool: name)
    }

    /// The interop helper that types a passphrase at age's prompts through a pty.
    static let ptyScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/age_pty.py").path

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Run {
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
        return Run(status: process.terminationStatus, stdout: try readBytes(outURL), stderr: String(decoding: try readBytes(errURL), as: UTF8.self))
    }

    /// age with a passphrase typed at its prompts (through a pty); the passphrase goes in a 0600 file.
    @discardableResult
    func runWithPassphrase(_ passphrase: String, _ arguments: [String], in folder: URL) throws -> Run {
        let file = folder.appendingPathComponent("passphrase-\(UUID().uuidString)")
        try writePrivate(Array(passphrase.utf8), to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try Self.run("/usr/bin/env", ["python3", Self.ptyScript, file.path, age] + arguments)
    }
}

/// A fresh folder removed at the end of the test.
final class Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-age-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
    func path(_ name: String) -> URL { url.appendingPathComponent(name) }
    deinit { try? FileManager.default.removeItem(at: url) }
}

func writePrivate(_ bytes: [UInt8], to url: URL) throws {
    FileManager.default.createFile(atPath: url.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
}

func readBytes(_ url: URL) throws -> [UInt8] { Array(try Data(contentsOf: url)) }

func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var bytes = [UInt8](repeating: 0, count: count)
    var i = 0
    while i < count {
        var word = generator.next()
        for _ in 0..<8 where i < count { bytes[i] = UInt8(truncatingIfNeeded: word); word >>= 8; i += 1 }
    }
    return bytes
}

/// Encrypts `plaintext` with the streaming encryptor into a file, fed in uneven pieces.
func encryptToFile(_ plaintext: [UInt8], at url: URL, make: (AgeFileDescriptorSink) throws -> AgeEncryptor) throws {
    let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    #expect(fd >= 0)
    defer { close(fd) }
    let encryptor = try make(AgeFileDescriptorSink(fd: fd))
    var offset = 0
    var piece = 1
    while offset < plaintext.count {
        let n = min(piece, plaintext.count - offset)
        try encryptor.write(contentsOf: plaintext[offset..<(offset + n)])
        offset += n
        piece = piece * 3 + 7  // 1, 10, 37, … then large pieces, crossing chunk boundaries at odd places
    }
    try encryptor.finish()
}

/// Encrypts in memory.
func encrypt(_ plaintext: [UInt8], to recipients: [AgeX25519Recipient]) throws -> [UInt8] {
    let sink = AgeMemorySink()
    let encryptor = try AgeEncryptor(recipients: recipients, sink: sink)
    try encryptor.write(contentsOf: plaintext)
    try encryptor.finish()
    return sink.bytes
}

/// Decrypts in memory.
func decrypt(_ file: [UInt8], with identities: [AgeX25519Identity]) throws(RaxxError) -> [UInt8] {
    let sink = AgeMemorySink()
    try AgeDecryptor.decrypt(from: AgeMemorySource(file), to: sink, identities: identities)
    return sink.bytes
}

/// The error a decryption throws (nil when it succeeds).
func decryptionError(_ file: [UInt8], with identities: [AgeX25519Identity]) -> RaxxError? {
    do {
        _ = try decrypt(file, with: identities)
        return nil
    } catch {
        return error
    }
}

/// A short stand-in for a byte string in expectations: its length and a 64-bit FNV-1a hash.
func summary(_ bytes: [UInt8]) -> String {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
    return "\(bytes.count) bytes, fnv1a \(String(hash, radix: 16))"
}

/// Byte-for-byte equality, reported by length and hash rather than by dumping megabytes.
func expectSameBytes(_ actual: [UInt8], _ expected: [UInt8], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    if actual != expected {
        Issue.record("\(what): got \(summary(actual)), expected \(summary(expected))", sourceLocation: sourceLocation)
    }
}

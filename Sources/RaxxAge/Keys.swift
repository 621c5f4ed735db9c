import CSodium
import Foundation
import RaxxCore
import RaxxSecrets

/// An age X25519 recipient: the public key a file is encrypted to, written `age1…` (lowercase
/// Bech32). Public: safe to print and to log.
public struct AgeX25519Recipient: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte Curve25519 public key.
    public let publicKey: [UInt8]

    /// Parses `age1…`. A malformed recipient is bad input (exit 65) whose message says what is
    /// wrong: not `age1…`, a character Bech32 does not have (and where), uppercase, a checksum
    /// that does not match (a typo), or the wrong length.
    public init(_ text: String, field: String = "recipient") throws(RaxxError) {
        func bad(_ message: String) -> RaxxError { RaxxError.badInput(field: field, message) }
        guard !text.isEmpty else { throw bad("The age recipient is empty; it looks like age1… (age-keygen prints one).") }
        guard text.lowercased().hasPrefix("age1") else {
            if text.uppercased().hasPrefix("AGE-SECRET-KEY-") {
                throw bad("That is an age secret key, not a recipient: give the public key (age1…), which `age-keygen -y` prints.")
            }
            throw bad("An age recipient starts with age1 (an X25519 public key, as age-keygen prints it).")
        }
        let decoded: (hrp: String, bytes: [UInt8], uppercase: Bool)
        do {
            decoded = try Bech32.decode(text)
        } catch {
            switch error {
            case .empty: throw bad("The age recipient is empty.")
            case .mixedCase, .tooShort, .noSeparator:
                throw bad(
                    error == .mixedCase
                        ? "The age recipient mixes upper and lower case; it is all lowercase (age1…)."
                        : "The age recipient is too short to be one.")
            case .invalidCharacter(let position):
                throw bad("The age recipient has a character Bech32 does not use at position \(position) (b, i, o and 1 after the prefix never occur).")
            case .checksum: throw bad("The age recipient's checksum does not match: a character is wrong, missing or swapped.")
            case .padding: throw bad("The age recipient is not a valid Bech32 encoding of a key (its padding bits are wrong).")
            }
        }
        guard !decoded.uppercase else { throw bad("The age recipient is in uppercase; an age recipient is lowercase (age1…).") }
        guard decoded.hrp == "age" else {
            throw bad("Only X25519 recipients (age1…) are supported; this one is of another type (\(decoded.hrp)1…).")
        }
        guard decoded.bytes.count == 32 else {
            throw bad("The age recipient encodes \(decoded.bytes.count) bytes; an X25519 public key has 32.")
        }
        publicKey = decoded.bytes
    }

    /// `age1…`.
    public var description: String { Bech32.encode(hrp: "age", bytes: publicKey) }
}

/// A passphrase for age's scrypt recipient. The bytes are the caller's (read from a file
/// descriptor or a terminal); they are copied once, wiped with `sodium_memzero` as soon as the key
/// is derived from them (the passphrase is then spent), and at the latest when freed.
public final class AgePassphrase: @unchecked Sendable {
    let secret: SecretBytes
    private(set) var spent = false

    private init(secret: SecretBytes) { self.secret = secret }

    /// Its length in characters (UTF-8 sequences), counted without copying it out.
    public var characters: Int { secret.bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }

    /// Copies `bytes`; wipe the caller's copy too. An empty passphrase is bad input.
    public convenience init(copying bytes: UnsafeRawBufferPointer) throws(RaxxError) {
        guard bytes.count > 0 else { throw RaxxError.badInput(field: "passphrase", "The passphrase is empty.") }
        self.init(secret: SecretBytes(copying: bytes))
    }

    /// Takes the bytes of `bytes` and wipes the array (with `sodium_memzero`) before returning.
    public convenience init(wiping bytes: inout [UInt8]) throws(RaxxError) {
        defer { Primitives.wipe(&bytes) }
        guard !bytes.isEmpty else { throw RaxxError.badInput(field: "passphrase", "The passphrase is empty.") }
        let secret = bytes.withUnsafeBytes { SecretBytes(copying: $0) }
        self.init(secret: secret)
    }

    /// The longest passphrase read from a file descriptor.
    public static let maximumLength = 4096

    /// Reads a passphrase from a file descriptor the caller opened (`--passphrase-fd N`): up to
    /// the first newline or the end, byte by byte so nothing past the line is consumed, without
    /// its line ending. Every intermediate copy is wiped. Empty or longer than `maximumLength`:
    /// bad input.
    public static func read(fromFileDescriptor fd: Int32, what: String? = nil) throws(RaxxError) -> AgePassphrase {
        let source = what ?? "file descriptor \(fd)"
        let buffer = SecretBytes(count: maximumLength + 1)
        var count = 0
        var byte: UInt8 = 0
        defer { byte = 0 }
        while true {
            let n = Foundation.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                throw RaxxError.usage("Could not read the passphrase from \(source): \(String(cString: strerror(errno))).")
            }
            if n == 0 || byte == UInt8(ascii: "\n") { break }
            if count > maximumLength { continue }  // too long: drain the line, refuse below
            buffer.bytes[count] = byte
            count += 1
        }
        if count > 0, buffer.bytes[count - 1] == UInt8(ascii: "\r") { count -= 1 }
        guard count <= maximumLength else {
            throw RaxxError.badInput(field: "passphrase", "The passphrase on \(source) is longer than \(maximumLength) bytes.")
        }
        guard count > 0 else { throw RaxxError.badInput(field: "passphrase", "No passphrase was given on \(source).") }
        return AgePassphrase(secret: SecretBytes(copying: UnsafeRawBufferPointer(rebasing: buffer.readable[0..<count])))
    }

    /// Asks on `terminal`, hidden, twice (`prompt`, then `again`): the two must match, or it is
    /// bad input and both are wiped. An empty answer is bad input, as on a file descriptor.
    public static func ask(on terminal: ControllingTerminal, prompt: String, again: String) throws(RaxxError) -> AgePassphrase {
        let first = try terminal.hidden(prompt: prompt) { fd throws(RaxxError) in try read(fromFileDescriptor: fd, what: "the terminal") }
        let second: AgePassphrase
        do {
            second = try terminal.hidden(prompt: again) { fd throws(RaxxError) in try read(fromFileDescriptor: fd, what: "the terminal") }
        } catch {
            first.wipe()
            throw error
        }
        defer { second.wipe() }
        guard first.matches(second) else {
            first.wipe()
            throw RaxxError.badInput(field: "passphrase", "The two passphrases do not match.")
        }
        return first
    }

    /// Whether `other` holds the same bytes (compared in constant time for equal lengths).
    func matches(_ other: AgePassphrase) -> Bool {
        guard !spent, !other.spent, secret.count == other.secret.count else { return false }
        return sodium_memcmp(secret.readable.baseAddress!, other.secret.readable.baseAddress!, secret.count) == 0
    }

    /// Uses the passphrase once, then wipes it.
    func spend<R>(_ body: (UnsafeRawBufferPointer) throws(RaxxError) -> R) throws(RaxxError) -> R {
        guard !spent else {
            throw RaxxError(code: .passphraseSpent, message: "This passphrase was already used and wiped; read it again.")
        }
        defer { wipe() }
        return try body(secret.readable)
    }

    /// Wipes the bytes now; the passphrase can no longer be used.
    public func wipe() {
        secret.wipe()
        spent = true
    }
}

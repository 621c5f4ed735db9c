import CSodium
import Foundation
import RaxxCore

#if canImport(Glibc)
    import Glibc
    import RaxxSecrets
#endif

/// Where a PIN comes from: a prompt on the controlling terminal, or a file descriptor the caller
/// opened (`--pin-fd N`). Never argv, never the environment.
public enum PINSource: Sendable, Equatable {
    case terminal
    case fileDescriptor(Int32)
}

public enum PIN {
    /// The shortest PIN that unlocks a passkey (passkeys made before the current rule had 4).
    public static let minimumLength = 4
    /// The shortest PIN a new passkey may be given: with Argon2id at about a second a guess, a
    /// copied state folder still costs an attacker days per million PINs, not minutes.
    public static let minimumNewLength = 6
    /// Argon2id's cost for a new passkey's PIN key: about a second on a quiet 2-core machine of
    /// this project's kind (measured with libsodium: 6 passes over 256 MiB took 0.91–0.96 s; 3
    /// passes 0.49 s; the old interactive cost 0.09 s), and bounded in memory. Stored with each
    /// passkey, so raising it later leaves existing passkeys working.
    public static let newOpsLimit: UInt64 = 6
    public static let newMemLimit: UInt64 = 256 << 20
    public static let maximumLength = 64
    /// What a new passkey's PIN must be, said the same wherever it is checked.
    public static let newLengthRule = "A new passkey's PIN has \(minimumNewLength) to \(maximumLength) characters."
    /// How many times a new PIN is asked on a terminal before a slip ends the command.
    public static let newPINAttempts = 3
    /// Wrong PINs allowed before the credential locks.
    public static let maximumAttempts = 5

    /// Reads a PIN; with `confirm` on a terminal, asks twice and insists they match.
    public static func read(from source: PINSource, prompt: String = "PIN: ", confirm: Bool = false) throws(RaxxError) -> SecretBytes {
        let pin: SecretBytes
        switch source {
        case .fileDescriptor(let fd):
            pin = try readLine(fd: fd, what: "--pin-fd \(fd)")
        case .terminal:
            let tty = try ControllingTerminal(
                orElse: RaxxError.usage(
                    "A PIN is needed, and there is no terminal to ask for it.",
                    hint: "Run on a terminal, or pass the PIN on a file descriptor: --pin-fd N"))
            guard confirm else {
                pin = try tty.hidden(prompt: prompt) { fd throws(RaxxError) in try readLine(fd: fd, what: "the terminal") }
                break
            }
            // A new PIN: its rule is checked as it is typed the first time, and a slip (too short,
            // or not repeated the same) is asked again, a few times, rather than ending the command.
            var chosen: SecretBytes? = nil
            for attempt in 1...newPINAttempts where chosen == nil {
                let first = try tty.hidden(prompt: prompt) { fd throws(RaxxError) in try readLine(fd: fd, what: "the terminal") }
                guard (minimumNewLength...maximumLength).contains(first.count) else {
                    first.wipe()
                    if attempt == newPINAttempts { throw RaxxError.badInput(Self.newLengthRule) }
                    tty.write(Self.newLengthRule + " Try again.\n")
                    continue
                }
                let again = try tty.hidden(prompt: "Repeat the PIN: ") { fd throws(RaxxError) in try readLine(fd: fd, what: "the terminal") }
                defer { again.wipe() }
                guard first.isEqual(to: again) else {
                    first.wipe()
                    if attempt == newPINAttempts { throw RaxxError.badInput("The two PINs do not match.") }
                    tty.write("The two PINs do not match. Try again.\n")
                    continue
                }
                chosen = first
            }
            guard let chosen else { throw RaxxError.badInput(Self.newLengthRule) }
            pin = chosen
        }
        // With `confirm` the PIN is a new passkey's, held to the rule for new ones.
        guard ((confirm ? minimumNewLength : minimumLength)...maximumLength).contains(pin.count) else {
            pin.wipe()
            throw RaxxError.badInput(confirm ? Self.newLengthRule : "A PIN has \(minimumLength) to \(maximumLength) characters.")
        }
        return pin
    }

    /// Reads a one-time code emailed for a registration: from `fd` (`--code-fd`), or asked on the
    /// terminal, shown as typed (it is spent once used).
    public static func readCode(from source: PINSource, prompt: String) throws(RaxxError) -> String {
        let line: SecretBytes
        switch source {
        case .fileDescriptor(let fd):
            line = try readLine(fd: fd, what: "--code-fd \(fd)", thing: "code")
        case .terminal:
            let tty = try ControllingTerminal(
                orElse: RaxxError.usage(
                    "The server emailed a one-time code, and there is no terminal to ask for it.",
                    hint: "Run on a terminal, or pass the code on a file descriptor: --code-fd N"))
            tty.write(prompt)
            line = try readLine(fd: tty.fd, what: "the terminal", thing: "code")
        }
        defer { line.wipe() }
        return line.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Asks `question` on the controlling terminal: whether the answer was y or yes (any other,
    /// or none, is no); nil when there is no terminal to ask on.
    public static func confirm(_ question: String) -> Bool? {
        guard let tty = try? ControllingTerminal(orElse: RaxxError.usage("no terminal")) else { return nil }
        tty.write(question)
        guard let line = try? readLine(fd: tty.fd, what: "the terminal", thing: "answer") else { return false }
        defer { line.wipe() }
        let answer = line.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.trimmingCharacters(in: .whitespaces).lowercased()
        return answer == "y" || answer == "yes"
    }

    /// Reads up to a newline (or the end) from `fd`, byte by byte so nothing past the line is consumed.
    static func readLine(fd: Int32, what: String, thing: String = "PIN") throws(RaxxError) -> SecretBytes {
        let buffer = SecretBytes(count: maximumLength + 2)
        var count = 0
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                buffer.wipe()
                throw RaxxError.usage("Could not read the \(thing) from \(what): \(String(cString: strerror(errno))).")
            }
            if n == 0 || byte == UInt8(ascii: "\n") { break }
            if count >= maximumLength + 1 { continue }  // too long: keep draining, reject below
            buffer.withUnsafeMutableBytes { $0[count] = byte }
            count += 1
        }
        byte = 0
        if count > 0, buffer.withUnsafeBytes({ $0[count - 1] }) == UInt8(ascii: "\r") { count -= 1 }
        guard count > 0 else { throw RaxxError.badInput("No \(thing) was given on \(what).") }
        let pin = SecretBytes(count: count)
        pin.withUnsafeMutableBytes { dst in buffer.withUnsafeBytes { src in dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[..<count])) } }
        buffer.wipe()
        return pin
    }

    /// The key a PIN unlocks: Argon2id over the PIN and a per-credential salt.
    static func derivedKey(pin: SecretBytes, salt: [UInt8], opsLimit: UInt64, memLimit: UInt64) throws(RaxxError) -> SecretBytes {
        try Sodium.ensureReady()
        let key = SecretBytes(count: 32)
        let status = key.withUnsafeMutableBytes { out in
            pin.withUnsafeBytes { p in
                crypto_pwhash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                    p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(p.count),
                    salt, opsLimit, Int(memLimit), crypto_pwhash_alg_argon2id13())
            }
        }
        guard status == 0 else {
            throw RaxxError(code: .outOfMemory, message: "Not enough memory to derive the PIN key.")
        }
        return key
    }
}

import Crypto
import Foundation
import RaxxCore
import RaxxSecrets

/// Reads an age v1 file (binary) and writes its plaintext to a sink, chunk by chunk, each chunk
/// only once it authenticates. It checks the header's MAC and every chunk, and refuses with a clear
/// error (bad input, exit 65) a file that is truncated, reordered, has a final chunk before its end,
/// data after its final chunk, or anything malformed; it never crashes on any input. As with `age`
/// itself, when an error comes after some chunks were written, the output must be thrown away.
public enum AgeDecryptor {
    /// The largest scrypt work factor accepted, as age's default (2^22: 4 GiB of memory).
    public static let defaultMaximumWorkFactor = 22
    /// The longest header read (a few hundred recipients fit).
    static let maximumHeaderLength = 1 << 20

    /// Decrypts a file encrypted to one of `identities`.
    public static func decrypt(from source: some AgeSource, to sink: some AgeSink, identities: [AgeX25519Identity]) throws(RaxxError) {
        try Sodium.ensureReady()
        guard !identities.isEmpty else { throw RaxxError.usage("Decrypting needs at least one identity.") }
        let reader = Reader(source)
        let header = try parseHeader(reader)
        let fileKey = try unwrapX25519(header.stanzas, identities: identities)
        try decryptPayload(reader, header: header, fileKey: fileKey, to: sink)
    }

    /// Decrypts a passphrase-encrypted file. The passphrase is wiped once used.
    public static func decrypt(
        from source: some AgeSource, to sink: some AgeSink, passphrase: AgePassphrase,
        maximumWorkFactor: Int = defaultMaximumWorkFactor
    ) throws(RaxxError) {
        defer { passphrase.wipe() }
        try Sodium.ensureReady()
        let reader = Reader(source)
        let header = try parseHeader(reader)
        let fileKey = try unwrapScrypt(header.stanzas, passphrase: passphrase, maximumWorkFactor: maximumWorkFactor)
        try decryptPayload(reader, header: header, fileKey: fileKey, to: sink)
    }

    static func bad(_ code: ErrorCode, _ message: String, hint: String? = nil) -> RaxxError {
        RaxxError(code: code, message: message, hint: hint)
    }

    // MARK: header

    struct ParsedHeader {
        var stanzas: [Stanza]
        var macInput: [UInt8]
        var mac: [UInt8]
    }

    static func parseHeader(_ reader: Reader) throws(RaxxError) -> ParsedHeader {
        func malformed(_ what: String) -> RaxxError { bad(.ageHeader, "This is not a valid age file: \(what).") }
        var consumed: [UInt8] = []
        func line() throws(RaxxError) -> [UInt8] {
            guard let line = try reader.readLine(limit: maximumHeaderLength - consumed.count) else {
                throw consumed.isEmpty ? malformed("it is empty") : malformed("its header ends early (truncated)")
            }
            return line
        }
        let first = try line()
        consumed += first + [0x0A]
        guard first == Array(AgeFormat.versionLine.utf8) else {
            if first.starts(with: Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)) {
                throw bad(
                    .ageArmored, "This age file is ASCII-armored; only the binary format is read here.",
                    hint: "Remove the armor first: age -d reads it, or decode the base64 between the BEGIN and END lines.")
            }
            if first.starts(with: Array("age-encryption.org/".utf8)) { throw malformed("its version is not v1") }
            throw malformed("it does not start with age-encryption.org/v1")
        }
        var stanzas: [Stanza] = []
        var pending = try line()
        while true {
            if pending.starts(with: Array("-> ".utf8)) {
                consumed += pending + [0x0A]
                let argumentBytes = pending.dropFirst(3)
                let arguments = argumentBytes.split(separator: 0x20, omittingEmptySubsequences: false)
                guard !arguments.isEmpty, arguments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { (0x21...0x7E).contains($0) } }) else {
                    throw malformed("stanza \(stanzas.count + 1) has an empty or non-printable argument")
                }
                var body: [UInt8] = []
                while true {
                    let bodyLine = try line()
                    consumed += bodyLine + [0x0A]
                    guard bodyLine.count <= AgeFormat.columns, bodyLine.allSatisfy(RawBase64.isBase64Character) else {
                        throw malformed("stanza \(stanzas.count + 1)'s body is not base64 wrapped at 64 columns")
                    }
                    body += bodyLine
                    if bodyLine.count < AgeFormat.columns { break }
                }
                guard let decoded = RawBase64.decode(body) else {
                    throw malformed("stanza \(stanzas.count + 1)'s body is not canonical base64")
                }
                stanzas.append(Stanza(arguments: arguments.map { String(decoding: $0, as: UTF8.self) }, body: decoded))
                pending = try line()
            } else if pending.starts(with: Array("---".utf8)) {
                guard !stanzas.isEmpty else { throw malformed("its header has no recipient stanza") }
                guard pending.count == 4 + 43, pending[3] == 0x20, let mac = RawBase64.decode(pending[4...]), mac.count == 32 else {
                    throw malformed("its header MAC line is malformed")
                }
                consumed += Array("---".utf8)
                return ParsedHeader(stanzas: stanzas, macInput: consumed, mac: mac)
            } else {
                throw malformed("its header has a line that is neither a stanza nor the MAC")
            }
        }
    }

    // MARK: file key

    static func unwrapX25519(_ stanzas: [Stanza], identities: [AgeX25519Identity]) throws(RaxxError) -> SecretBytes {
        if stanzas.contains(where: { $0.arguments.first == "scrypt" }) {
            throw bad(.agePassphraseFile, "This age file is encrypted with a passphrase, not to a key.")
        }
        for stanza in stanzas where stanza.arguments.first == "X25519" {
            guard stanza.arguments.count == 2, let share = RawBase64.decode(Array(stanza.arguments[1].utf8)), share.count == 32 else {
                throw bad(.ageHeader, "This is not a valid age file: an X25519 stanza's ephemeral share is malformed.")
            }
            guard stanza.body.count == AgeFormat.fileKeyLength + Primitives.aeadTagLength else {
                throw bad(.ageHeader, "This is not a valid age file: an X25519 stanza's body has the wrong length.")
            }
            for identity in identities {
                let shared = SecretBytes(count: 32)
                let ok = share.withUnsafeBytes { Primitives.x25519(scalar: identity.secret.readable, point: $0, into: shared.bytes) }
                guard ok else {
                    throw bad(.ageHeader, "This is not a valid age file: an X25519 stanza's ephemeral share is a low-order point.")
                }
                let wrapKey = Primitives.hkdf(key: shared.readable, salt: share + identity.recipient.publicKey, info: AgeFormat.x25519Label)
                shared.wipe()
                if let fileKey = unwrap(stanza.body, with: wrapKey) { return fileKey }
            }
        }
        throw bad(
            .ageNoIdentity, "None of the given identities opens this age file.",
            hint: "It was encrypted to other recipients; use the secret key of the age1… it was encrypted to.")
    }

    static func unwrapScrypt(_ stanzas: [Stanza], passphrase: AgePassphrase, maximumWorkFactor: Int) throws(RaxxError) -> SecretBytes {
        guard let stanza = stanzas.first(where: { $0.arguments.first == "scrypt" }) else {
            throw bad(.ageNotPassphrase, "This age file is not passphrase-encrypted; it needs a secret key.")
        }
        guard stanzas.count == 1 else {
            throw bad(.ageHeader, "This is not a valid age file: a passphrase stanza must be its only stanza.")
        }
        let arguments = stanza.arguments
        guard arguments.count == 3, let salt = RawBase64.decode(Array(arguments[1].utf8)), salt.count == 16 else {
            throw bad(.ageHeader, "This is not a valid age file: its scrypt stanza is malformed.")
        }
        let factor = Array(arguments[2].utf8)
        guard let firstDigit = factor.first, (0x31...0x39).contains(firstDigit), factor.allSatisfy({ (0x30...0x39).contains($0) }),
            factor.count <= 2, let logN = Int(arguments[2])
        else {
            throw bad(.ageHeader, "This is not a valid age file: its scrypt work factor is malformed.")
        }
        guard logN <= maximumWorkFactor else {
            throw bad(.ageWorkFactor, "This age file's scrypt work factor (\(logN)) is above the limit of \(maximumWorkFactor).")
        }
        guard stanza.body.count == AgeFormat.fileKeyLength + Primitives.aeadTagLength else {
            throw bad(.ageHeader, "This is not a valid age file: its scrypt stanza's body has the wrong length.")
        }
        let key = SecretBytes(count: 32)
        defer { key.wipe() }
        try passphrase.spend { (bytes) throws(RaxxError) in
            try Primitives.scrypt(passphrase: bytes, salt: Array(AgeFormat.scryptLabel.utf8) + salt, logN: logN, into: key.bytes)
        }
        guard let fileKey = unwrap(stanza.body, with: key.readable) else {
            throw bad(.ageWrongPassphrase, "The passphrase is wrong (or the file was changed).")
        }
        return fileKey
    }

    private static func unwrap(_ body: [UInt8], with key: SymmetricKey) -> SecretBytes? {
        key.withUnsafeBytes { unwrap(body, with: $0) }
    }

    private static func unwrap(_ body: [UInt8], with key: UnsafeRawBufferPointer) -> SecretBytes? {
        let fileKey = SecretBytes(count: AgeFormat.fileKeyLength)
        let ok = body.withUnsafeBytes { ciphertext in
            AgeFormat.zeroNonce.withUnsafeBytes { Primitives.open(key: key, nonce: $0, ciphertext: ciphertext, into: fileKey.bytes) }
        }
        return ok ? fileKey : nil
    }

    // MARK: payload

    static func decryptPayload(_ reader: Reader, header: ParsedHeader, fileKey: SecretBytes, to sink: some AgeSink) throws(RaxxError) {
        defer { fileKey.wipe() }
        let macKey = Primitives.hkdf(key: fileKey.readable, salt: [], info: "header")
        guard Primitives.hmacIsValid(key: macKey, mac: header.mac, header.macInput) else {
            throw bad(.ageHeaderMAC, "This age file's header was changed: its MAC does not match.")
        }
        var nonce = [UInt8](repeating: 0, count: AgeFormat.payloadNonceLength)
        let got = try nonce.withMutableRawBytes { (raw) throws(RaxxError) in try reader.readFull(into: raw) }
        guard got == AgeFormat.payloadNonceLength else { throw truncated }
        let payloadKey = SecretBytes(count: 32)
        defer { payloadKey.wipe() }
        Primitives.hkdf(key: fileKey.readable, salt: nonce, info: "payload").withUnsafeBytes { payloadKey.bytes.copyMemory(from: $0) }
        fileKey.wipe()

        let sealed = UnsafeMutableRawBufferPointer.allocate(byteCount: AgeFormat.sealedChunkLength, alignment: 16)
        defer { sealed.deallocate() }
        let plaintext = SecretBytes(count: AgeFormat.chunkLength)
        var counter: UInt64 = 0
        while true {
            let n = try reader.readFull(into: sealed)
            var atEnd = n < AgeFormat.sealedChunkLength
            if !atEnd { atEnd = try reader.atEnd() }
            if n == 0 { throw truncated }
            guard n >= Primitives.aeadTagLength else { throw truncated }
            let chunk = UnsafeRawBufferPointer(rebasing: sealed[0..<n])
            let out = UnsafeMutableRawBufferPointer(rebasing: plaintext.bytes[0..<(n - Primitives.aeadTagLength)])
            let open = { (final: Bool) -> Bool in
                AgeFormat.chunkNonce(counter: counter, final: final).withUnsafeBytes {
                    Primitives.open(key: payloadKey.readable, nonce: $0, ciphertext: chunk, into: out)
                }
            }
            if atEnd {
                guard open(true) else {
                    if open(false) { Primitives.wipe(out); throw truncated }
                    throw corrupted(counter)
                }
                if out.count == 0 && counter > 0 {
                    throw bad(.agePayload, "This is not a valid age file: its final chunk is empty.")
                }
                defer { plaintext.wipe() }
                try sink.write(UnsafeRawBufferPointer(out))
                return
            }
            guard open(false) else {
                if open(true) {
                    Primitives.wipe(out)
                    throw bad(.ageTrailingData, "This age file has data after its final chunk.")
                }
                throw corrupted(counter)
            }
            try sink.write(UnsafeRawBufferPointer(out))
            Primitives.wipe(out)
            counter += 1
        }
    }

    static let truncated = bad(.ageTruncated, "This age file is truncated: its end is missing.")

    static func corrupted(_ chunk: UInt64) -> RaxxError {
        bad(.agePayload, "This age file was changed or damaged: chunk \(chunk + 1) does not authenticate.")
    }
}

/// A buffered reader over a source: lines for the header, then whole chunks.
final class Reader {
    private let source: any AgeSource
    private var buffer = [UInt8](repeating: 0, count: 16 << 10)
    private var start = 0
    private var end = 0
    private var sourceEnded = false

    init(_ source: some AgeSource) { self.source = source }

    private func refill() throws(RaxxError) -> Bool {
        if sourceEnded { return false }
        if start == end { start = 0; end = 0 }
        if end == buffer.count {
            guard start > 0 else { return true }
            buffer.withUnsafeMutableBytes { raw in
                raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: end - start)
            }
            end -= start
            start = 0
        }
        let n = try buffer.withMutableRawBytes { (raw) throws(RaxxError) in
            try source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[end...]))
        }
        if n == 0 { sourceEnded = true; return false }
        end += n
        return true
    }

    /// The next line without its LF; nil at the end with nothing read. Refuses lines longer than
    /// `limit` and a last line with no LF.
    func readLine(limit: Int) throws(RaxxError) -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            if let newline = buffer[start..<end].firstIndex(of: 0x0A) {
                line += buffer[start..<newline]
                start = newline + 1
                guard line.count <= limit else { throw AgeDecryptor.bad(.ageHeader, "This is not a valid age file: its header is too long.") }
                return line
            }
            line += buffer[start..<end]
            start = end
            guard line.count <= limit else { throw AgeDecryptor.bad(.ageHeader, "This is not a valid age file: its header is too long.") }
            guard try refill() else {
                if line.isEmpty { return nil }
                throw AgeDecryptor.bad(.ageHeader, "This is not a valid age file: its header ends early (truncated).")
            }
        }
    }

    /// Fills `out` completely unless the input ends first; returns the count read.
    func readFull(into out: UnsafeMutableRawBufferPointer) throws(RaxxError) -> Int {
        var filled = 0
        let buffered = min(end - start, out.count)
        if buffered > 0 {
            buffer.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + start, byteCount: buffered) }
            start += buffered
            filled = buffered
        }
        while filled < out.count && !sourceEnded {
            let n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: out[filled...]))
            if n == 0 { sourceEnded = true } else { filled += n }
        }
        return filled
    }

    /// Whether nothing is left (reads ahead at most one buffer).
    func atEnd() throws(RaxxError) -> Bool {
        if start < end { return false }
        return !(try refill())
    }
}

import Crypto
import Foundation
import RaxxCore
import RaxxSecrets

/// Writes an age v1 file (binary, not armored) to a sink as the plaintext streams in: the header
/// at once, then each 64 KiB chunk as soon as it is known not to be the last, so memory stays at
/// about 128 KiB whatever the length. `finish()` seals the last chunk; an encryptor dropped without
/// it leaves a truncated file that every age decryptor refuses. The file key and every derived key
/// are wiped with `sodium_memzero` once used; the plaintext buffer too.
///
///     let sink = AgeMemorySink()
///     let encryptor = try AgeEncryptor(recipients: [try AgeX25519Recipient("age1…")], sink: sink)
///     try encryptor.write(contentsOf: document)
///     try encryptor.finish()
///     // sink.bytes is the age file
public final class AgeEncryptor: AgeSink {
    /// age's default scrypt work factor (log2 N), about a second and 256 MiB.
    public static let defaultWorkFactor = 18
    /// The largest work factor this encryptor writes: age's own decryptor refuses more by default.
    public static let maximumWorkFactor = 22

    private let sink: any AgeSink
    private let payloadKey = SecretBytes(count: 32)
    private let plaintext = SecretBytes(count: AgeFormat.chunkLength)
    private let sealed: UnsafeMutableRawBufferPointer
    private var filled = 0
    private var counter: UInt64 = 0
    private var finished = false
    private var failed = false

    /// Encrypts to one or more X25519 recipients (`age1…`).
    public convenience init(recipients: [AgeX25519Recipient], sink: some AgeSink) throws(RaxxError) {
        guard !recipients.isEmpty else { throw RaxxError.usage("An age file needs at least one recipient.") }
        try self.init(sink: sink) { fileKey throws(RaxxError) in
            var stanzas: [Stanza] = []
            for recipient in recipients { stanzas.append(try Self.x25519Stanza(recipient, fileKey: fileKey)) }
            return stanzas
        }
    }

    /// Encrypts with a passphrase (age's scrypt recipient, r = 8, p = 1, N = 2^workFactor). The
    /// passphrase is wiped once the key is derived.
    public convenience init(passphrase: AgePassphrase, workFactor: Int = AgeEncryptor.defaultWorkFactor, sink: some AgeSink) throws(RaxxError) {
        guard (1...Self.maximumWorkFactor).contains(workFactor) else {
            passphrase.wipe()
            throw RaxxError.usage("The scrypt work factor is between 1 and \(Self.maximumWorkFactor) (age's default is \(Self.defaultWorkFactor)).")
        }
        try self.init(sink: sink) { fileKey throws(RaxxError) in
            [try Self.scryptStanza(passphrase, workFactor: workFactor, fileKey: fileKey)]
        }
    }

    private init(sink: some AgeSink, stanzas makeStanzas: (UnsafeRawBufferPointer) throws(RaxxError) -> [Stanza]) throws(RaxxError) {
        try Sodium.ensureReady()
        self.sink = sink
        sealed = .allocate(byteCount: AgeFormat.sealedChunkLength, alignment: 16)
        sealed.initializeMemory(as: UInt8.self, repeating: 0)

        let fileKey = SecretBytes(count: AgeFormat.fileKeyLength)
        defer { fileKey.wipe() }
        Primitives.random(into: fileKey.bytes)
        let header = Header(stanzas: try makeStanzas(fileKey.readable))
        var nonce = [UInt8](repeating: 0, count: AgeFormat.payloadNonceLength)
        nonce.withUnsafeMutableBytes { Primitives.random(into: $0) }
        Primitives.hkdf(key: fileKey.readable, salt: nonce, info: "payload").withUnsafeBytes { payloadKey.bytes.copyMemory(from: $0) }
        let start = header.encoded(fileKey: fileKey.readable) + nonce
        try start.withRawBytes { (raw) throws(RaxxError) in try sink.write(raw) }
    }

    /// Appends plaintext; writes every chunk that fills and is followed by more.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError) {
        guard !finished, !failed else { throw Self.closedError }
        var offset = 0
        while offset < bytes.count {
            if filled == AgeFormat.chunkLength { try sealChunk(final: false) }
            let n = min(AgeFormat.chunkLength - filled, bytes.count - offset)
            (plaintext.bytes.baseAddress! + filled).copyMemory(from: bytes.baseAddress! + offset, byteCount: n)
            filled += n
            offset += n
        }
    }

    /// Appends plaintext from any bytes ([UInt8], Data, a String's UTF-8 view…).
    public func write(contentsOf bytes: some Collection<UInt8>) throws(RaxxError) {
        let done: Result<Void, RaxxError>? = bytes.withContiguousStorageIfAvailable { buffer in
            do throws(RaxxError) { try write(UnsafeRawBufferPointer(buffer)); return .success(()) } catch { return .failure(error) }
        }
        if let done { return try done.get() }
        var copy = Array(bytes)
        defer { Primitives.wipe(&copy) }
        try copy.withRawBytes { (raw) throws(RaxxError) in try write(raw) }
    }

    /// Seals and writes the last chunk (empty when there was no input at all) and wipes the keys.
    /// The file is complete only once this returns.
    public func finish() throws(RaxxError) {
        guard !finished, !failed else { throw Self.closedError }
        try sealChunk(final: true)
        finished = true
        payloadKey.wipe()
        plaintext.wipe()
    }

    private static let closedError = RaxxError(
        code: .ageClosed, message: "The encrypted file was already finished or failed; nothing more can be written to it.")

    private func sealChunk(final: Bool) throws(RaxxError) {
        guard counter < UInt64.max else { throw RaxxError(code: .ageTooLong, message: "The file is too long for age's chunk counter.") }
        let nonce = AgeFormat.chunkNonce(counter: counter, final: final)
        let input = UnsafeRawBufferPointer(rebasing: plaintext.readable[0..<filled])
        nonce.withUnsafeBytes { Primitives.seal(key: payloadKey.readable, nonce: $0, plaintext: input, into: sealed) }
        Primitives.wipe(UnsafeMutableRawBufferPointer(rebasing: plaintext.bytes[0..<filled]))
        let out = UnsafeRawBufferPointer(rebasing: sealed[0..<(filled + Primitives.aeadTagLength)])
        filled = 0
        counter += 1
        do {
            try sink.write(out)
        } catch {
            failed = true
            payloadKey.wipe()
            throw error
        }
    }

    deinit {
        sealed.deallocate()
    }

    // MARK: stanzas

    private static func x25519Stanza(_ recipient: AgeX25519Recipient, fileKey: UnsafeRawBufferPointer) throws(RaxxError) -> Stanza {
        let ephemeral = SecretBytes(count: 32)
        Primitives.random(into: ephemeral.bytes)
        var share = [UInt8](repeating: 0, count: 32)
        share.withUnsafeMutableBytes { Primitives.x25519Base(scalar: ephemeral.readable, into: $0) }
        let shared = SecretBytes(count: 32)
        let ok = recipient.publicKey.withUnsafeBytes { Primitives.x25519(scalar: ephemeral.readable, point: $0, into: shared.bytes) }
        ephemeral.wipe()
        guard ok else {
            throw RaxxError.badInput(field: "recipient", "This age recipient is not a usable X25519 public key (a low-order point).")
        }
        let body = wrap(fileKey: fileKey, with: Primitives.hkdf(key: shared.readable, salt: share + recipient.publicKey, info: AgeFormat.x25519Label))
        shared.wipe()
        return Stanza(arguments: ["X25519", RawBase64.encode(share)], body: body)
    }

    private static func scryptStanza(_ passphrase: AgePassphrase, workFactor: Int, fileKey: UnsafeRawBufferPointer) throws(RaxxError) -> Stanza {
        var salt = [UInt8](repeating: 0, count: 16)
        salt.withUnsafeMutableBytes { Primitives.random(into: $0) }
        let key = SecretBytes(count: 32)
        defer { key.wipe() }
        try passphrase.spend { (bytes) throws(RaxxError) in
            try Primitives.scrypt(passphrase: bytes, salt: Array(AgeFormat.scryptLabel.utf8) + salt, logN: workFactor, into: key.bytes)
        }
        let body = wrap(fileKey: fileKey, with: key.readable)
        return Stanza(arguments: ["scrypt", RawBase64.encode(salt), String(workFactor)], body: body)
    }

    /// ChaCha20-Poly1305 of the file key under a wrap key, with the zero nonce.
    private static func wrap(fileKey: UnsafeRawBufferPointer, with key: SymmetricKey) -> [UInt8] {
        key.withUnsafeBytes { wrap(fileKey: fileKey, with: $0) }
    }

    private static func wrap(fileKey: UnsafeRawBufferPointer, with key: UnsafeRawBufferPointer) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: AgeFormat.fileKeyLength + Primitives.aeadTagLength)
        body.withUnsafeMutableBytes { out in
            AgeFormat.zeroNonce.withUnsafeBytes { Primitives.seal(key: key, nonce: $0, plaintext: fileKey, into: out) }
        }
        return body
    }
}

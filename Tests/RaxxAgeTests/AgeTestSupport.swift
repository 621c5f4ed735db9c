import Foundation
import RaxxAge
import RaxxCore
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

/// Writes straight to a file descriptor the caller opened (and closes); unbuffered, so each
/// encrypted chunk is written as it is sealed. The tools write no age file this way, so they have no
/// error code for its failing: a test's failed write is `internal`.
struct AgeFileDescriptorSink: AgeSink, Sendable {
    let fd: Int32

    func write(_ bytes: UnsafeRawBufferPointer) throws(RaxxError) {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            #else
                let n = Darwin.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            #endif
            if n < 0 {
                if errno == EINTR { continue }
                throw RaxxError(code: .internal, message: "The test could not write its age file: \(String(cString: strerror(errno))).")
            }
            offset += n
        }
    }
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

/// Where an age file's header ends (just past the MAC line's LF), nil when it has none.
func headerEnd(_ file: [UInt8]) -> Int? {
    let marker = Array("\n--- ".utf8)
    guard file.count >= marker.count, let start = (0...(file.count - marker.count)).first(where: { Array(file[$0..<($0 + marker.count)]) == marker }),
        let newline = file[(start + 1)...].firstIndex(of: 0x0A)
    else { return nil }
    return newline + 1
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

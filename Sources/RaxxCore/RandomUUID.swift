import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension UUID {
    /// A random (version 4) UUID from the system's generator, getrandom(2) on Linux, by way of
    /// `RandomPool`. Foundation's `UUID()` there opens, reads and closes /dev/urandom for every one:
    /// three system calls that came to about 4 % of `raxx-notify push`'s CPU, one apns-id per
    /// notification.
    public static func random() -> UUID {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            RandomPool.fill(bytes)
            bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4: random
            bytes[8] = (bytes[8] & 0x3F) | 0x80  // variant 1 (RFC 9562)
        }
        return UUID(uuid: uuid)
    }

    /// A random UUID's text in lower case (8-4-4-4-12), written directly: Foundation's
    /// `uuidString` goes through its string formatter, which came to about 2 % of
    /// `raxx-notify push`'s CPU.
    public static func randomString() -> String {
        let uuid = random().uuid
        let hex: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                var at = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    out[at] = hex.utf8Start[Int(byte >> 4)]
                    out[at + 1] = hex.utf8Start[Int(byte & 0x0F)]
                    at += 2
                }
                return at
            }
        }
    }
}

/// Random bytes from the system's generator (getrandom(2) on Linux), drawn 4 KiB at a time and
/// handed out in order: every draw is a system call, and a UUID drawn as two 64-bit numbers
/// (`SystemRandomNumberGenerator`) made two, for 16 bytes. For identifiers, never for secrets
/// (keys and tokens come from libsodium). The pool is this process's memory: a process that forked
/// without exec would hand out the same bytes in both (none of the suite's does).
public enum RandomPool {
    private static let pool = Mutex<(bytes: [UInt8], next: Int)>(([UInt8](repeating: 0, count: drawSize), drawSize))

    /// Bytes drawn from the system at a time.
    static let drawSize = 4096

    /// Fills `out` (at most `drawSize` bytes) with bytes no other call is given.
    public static func fill(_ out: UnsafeMutableRawBufferPointer) {
        precondition(out.count <= drawSize, "at most \(drawSize) bytes at a time")
        guard let destination = out.baseAddress, !out.isEmpty else { return }
        pool.withLock { pool in
            if pool.next + out.count > pool.bytes.count {
                pool.bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
                pool.next = 0
            }
            pool.bytes.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + pool.next, byteCount: out.count) }
            pool.next += out.count
        }
    }
}

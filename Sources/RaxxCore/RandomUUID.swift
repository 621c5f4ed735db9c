import Foundation

extension UUID {
    /// A random (version 4) UUID from the system's generator, getrandom(2) on Linux. Foundation's
    /// `UUID()` there opens, reads and closes /dev/urandom for every one: three system calls that
    /// came to about 4 % of `raxx-notify push`'s CPU, one apns-id per notification.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
            bytes[6] = (bytes[6] & 0x0F) | 0x40 // version 4: random
            bytes[8] = (bytes[8] & 0x3F) | 0x80 // variant 1 (RFC 9562)
        }
        return UUID(uuid: uuid)
    }
}

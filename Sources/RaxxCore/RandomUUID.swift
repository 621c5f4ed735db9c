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

import Foundation

/// Unpadded standard base64 (RFC 4648 §4), canonical, as age writes it.
enum RawBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next()
            let c = b == nil ? nil : iterator.next()
            out.append(alphabet[Int(a >> 2)])
            out.append(alphabet[Int((a & 0x03) << 4 | (b ?? 0) >> 4)])
            if let b { out.append(alphabet[Int((b & 0x0F) << 2 | (c ?? 0) >> 6)]) }
            if let c { out.append(alphabet[Int(c & 0x3F)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Bech32 (BIP 173) without its 90-character limit, as age encodes its keys.
enum Bech32 {
    static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (i, c) in charset.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    enum Failure: Error, Equatable {
        case empty
        case mixedCase
        case invalidCharacter(position: Int)
        case noSeparator
        case tooShort
        case checksum
        case padding
    }

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        let generators: [UInt32] = [0x3B6A_57B2, 0x2650_8E6D, 0x1EA1_19FA, 0x3D42_33DD, 0x2A14_62B3]
        var chk: UInt32 = 1
        for v in values {
            let top = chk >> 25
            chk = (chk & 0x1FF_FFFF) << 5 ^ UInt32(v)
            for i in 0..<5 where (top >> UInt32(i)) & 1 == 1 { chk ^= generators[i] }
        }
        return chk
    }

    private static func expand(_ hrp: [UInt8]) -> [UInt8] {
        hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
    }

    /// Lowercase Bech32 of `bytes` under `hrp` (given lowercase); callers uppercase it when the
    /// encoding is an uppercase one.
    static func encode(hrp: String, bytes: some Collection<UInt8>) -> String {
        let h = Array(hrp.utf8)
        let data = convert(Array(bytes), from: 8, to: 5, pad: true)!
        let pm = polymod(expand(h) + data + [0, 0, 0, 0, 0, 0]) ^ 1
        let checksum = (0..<6).map { UInt8((pm >> (5 * (5 - UInt32($0)))) & 31) }
        return hrp + "1" + String(decoding: (data + checksum).map { charset[Int($0)] }, as: UTF8.self)
    }

    /// The human-readable part (lowercased) and the bytes of a Bech32 string; `uppercase` tells
    /// which case it was written in.
    static func decode(_ text: String) throws(Failure) -> (hrp: String, bytes: [UInt8], uppercase: Bool) {
        let raw = Array(text.utf8)
        guard !raw.isEmpty else { throw .empty }
        for (i, c) in raw.enumerated() where c < 33 || c > 126 { throw .invalidCharacter(position: i + 1) }
        let hasLower = raw.contains { (97...122).contains($0) }
        let hasUpper = raw.contains { (65...90).contains($0) }
        guard !(hasLower && hasUpper) else { throw .mixedCase }
        let lower = raw.map { (65...90).contains($0) ? $0 + 32 : $0 }
        guard let separator = lower.lastIndex(of: UInt8(ascii: "1")), separator >= 1 else { throw .noSeparator }
        guard lower.count - separator - 1 >= 6 else { throw .tooShort }
        let hrp = Array(lower[..<separator])
        var data: [UInt8] = []
        for i in (separator + 1)..<lower.count {
            let v = values[Int(lower[i])]
            guard v >= 0 else { throw .invalidCharacter(position: i + 1) }
            data.append(UInt8(v))
        }
        guard polymod(expand(hrp) + data) == 1 else { throw .checksum }
        guard let bytes = convert(Array(data.dropLast(6)), from: 5, to: 8, pad: false) else { throw .padding }
        return (String(decoding: hrp, as: UTF8.self), bytes, hasUpper)
    }

    /// Regroups bits; nil when unpadded input leaves more than a partial group or non-zero bits.
    private static func convert(_ data: [UInt8], from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var acc = 0, bits = 0
        let maxValue = (1 << to) - 1
        var out: [UInt8] = []
        for value in data {
            acc = (acc << from) | Int(value)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((acc >> bits) & maxValue))
            }
            acc &= (1 << bits) - 1
        }
        if pad {
            if bits > 0 { out.append(UInt8((acc << (to - bits)) & maxValue)) }
        } else if bits >= from || (acc << (to - bits)) & maxValue != 0 {
            return nil
        }
        return out
    }
}

import Foundation
import PropertyBased
import RaxxCore
import Testing

@Suite struct ASCIIHexTests {
    @Test func onlyASCIIDigitsAndLettersAToFAreHexDigits() {
        let hex = Array("0123456789abcdefABCDEF".utf8)
        let accepted = (0...255).map { UInt8($0) }.filter { $0.isASCIIHexDigit }
        #expect(accepted == hex.sorted())
        // A full-width digit is several bytes, none of them a hex digit.
        let fullWidth = "１".utf8.filter { $0.isASCIIHexDigit }
        #expect(fullWidth.isEmpty)
    }

    /// Every byte alone, then random byte strings of 0-100 bytes: the same text as Foundation's
    /// "%02x" for each byte, joined (what the hashes at rest were written with before).
    @Test func lowercaseWritesWhatPercent02xWrites() async {
        for byte in 0...255 {
            #expect(ASCIIHex.lowercase([UInt8(byte)]) == String(format: "%02x", byte))
        }
        await propertyCheck(count: 1_000, input: Gen.uint8().array(of: 0...100)) { bytes in
            #expect(ASCIIHex.lowercase(bytes) == bytes.map { String(format: "%02x", $0) }.joined(), "\(bytes)")
        }
        #expect(ASCIIHex.lowercase([]) == "")
    }
}

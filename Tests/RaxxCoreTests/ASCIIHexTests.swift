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
}

import Foundation
import Testing

@testable import RaxxVault

/// The machine id is trimmed exactly as Foundation's whitespace-and-newlines trimming did.
@Suite struct MachineIDTrimTests {
    @Test func trimsWhatFoundationTrims() {
        for value in 0...0x3100 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            for text in ["\(scalar)", "\(scalar)id\(scalar)", "id\(scalar)x", "\(scalar)\(scalar)9f2c\n"] {
                #expect(
                    DeviceKey.trimmingWhitespace(text) == text.trimmingCharacters(in: .whitespacesAndNewlines),
                    "U+\(String(value, radix: 16))")
            }
        }
        #expect(DeviceKey.trimmingWhitespace("  0123456789abcdef0123456789abcdef\n") == "0123456789abcdef0123456789abcdef")
        #expect(DeviceKey.trimmingWhitespace("\n\t \u{2028}") == "")
    }
}

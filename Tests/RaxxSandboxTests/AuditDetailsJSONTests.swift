import Foundation
import PropertyBased
import Testing

@testable import RaxxSandbox

/// The audit trail's details, written directly, are the text JSONEncoder (sorted keys) writes.
@Suite struct AuditDetailsJSONTests {
    /// Scalars that JSON escapes, or that a careless writer would: controls, C1 controls, the
    /// characters JSON quotes, slashes, line and paragraph separators, and text beyond ASCII.
    static let awkward: [Unicode.Scalar] =
        (0..<0x20).map { Unicode.Scalar(UInt8($0)) }
        + ["\"", "\\", "/", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "é", "中", "\u{2028}", "\u{2029}", "\u{FEFF}", "😀", "\u{10FFFF}"]

    @Test func theTextIsWhatJSONEncoderWrites() async {
        await propertyCheck(count: 2_000, input: Gen.uint64()) { seed in
            var state = seed
            func next(_ bound: Int) -> Int {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return Int((z ^ (z >> 31)) % UInt64(bound))
            }
            let keyLetters = Array("abcdefghijklmnopqrstuvwxyz_".unicodeScalars)
            var details: [String: String] = [:]
            for _ in 0..<next(7) {
                let key = String(String.UnicodeScalarView((0...next(12)).map { _ in keyLetters[next(keyLetters.count)] }))
                let value = String(
                    String.UnicodeScalarView(
                        (0..<next(24)).map { _ -> Unicode.Scalar in
                            next(3) == 0 ? Self.awkward[next(Self.awkward.count)] : Unicode.Scalar(UInt8(0x20 + next(0x5F)))
                        }))
                details[key] = value
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let expected = String(decoding: try! encoder.encode(details), as: UTF8.self)
            #expect(AuditDetailsJSON.text(details) == expected, "\(details)")
        }
        #expect(AuditDetailsJSON.text([:]) == "{}")
    }
}

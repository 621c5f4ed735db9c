import Foundation
import PropertyBased
import RaxxDomain
import Testing

/// The one rule for the addresses the platform mails (`EmailAddress`).
@Suite struct EmailAddressTests {
    @Test(arguments: [
        ("  Bob@X.Test ", "bob@x.test"),
        ("o'brien@example.com", "o'brien@example.com"),
        ("a+tag@sub.example.co.uk", "a+tag@sub.example.co.uk"),
        ("jürgen@exämple.de", "jürgen@exämple.de"),
        ("jose\u{301}@example.com", "jos\u{E9}@example.com"),
    ])
    func goodAddressesAreLowercasedAndTrimmed(text: String, normalized: String) throws {
        #expect(Array(try EmailAddress.normalized(text).utf8) == Array(normalized.utf8))
        #expect(EmailAddress.isMailable(normalized))
    }

    @Test(arguments: [
        ("", EmailAddress.Refusal.empty),
        ("nul\u{0}@example.com", .forbiddenCharacter("\u{0}")),
        ("esc\u{1B}@example.com", .forbiddenCharacter("\u{1B}")),
        ("back\u{8}@example.com", .forbiddenCharacter("\u{8}")),
        ("evil@attacker.test>,<victim@example.com", .forbiddenCharacter(">")),
        ("\"q\"@example.com", .forbiddenCharacter("\"")),
        ("a b@example.com", .forbiddenCharacter(" ")),
        ("line\u{2028}@example.com", .forbiddenCharacter("\u{2028}")),
        ("rtl\u{202E}@example.com", .forbiddenCharacter("\u{202E}")),
        ("two@@example.com", .notOneAt),
        ("none.example.com", .notOneAt),
        ("@example.com", .noLocalPart),
        ("a@example", .badDomain),
        ("a@example..com", .badDomain),
        ("a@.example.com", .badDomain),
        ("a@example.com.", .badDomain),
    ])
    func badAddressesAreRefusedWithTheReason(text: String, refusal: EmailAddress.Refusal) {
        #expect(throws: refusal) { try EmailAddress.normalized(text) }
    }

    /// 254 bytes of UTF-8, not 254 characters: a 900 KB address was accepted before.
    @Test func theLimitIsInBytes() throws {
        let fits = String(repeating: "a", count: 254 - "@example.com".utf8.count) + "@example.com"
        #expect(try EmailAddress.normalized(fits).utf8.count == 254)
        #expect(throws: EmailAddress.Refusal.tooLong(bytes: 255)) { try EmailAddress.normalized("a" + fits) }
        let wide = String(repeating: "é", count: 125) + "@example.com"
        #expect(wide.count < 254)
        #expect(throws: EmailAddress.Refusal.tooLong(bytes: wide.utf8.count)) { try EmailAddress.normalized(wide) }
        #expect(throws: EmailAddress.Refusal.tooLong(bytes: 900_012)) {
            try EmailAddress.normalized(String(repeating: "a", count: 900_000) + "@example.com")
        }
    }

    /// Generated addresses with any character of any kind put in: what is accepted is its own
    /// normalization, fits the limit, and holds nothing that could end or split a header.
    @Test func whatIsAcceptedCanNeverBreakAHeader() async {
        let alphabet: [Unicode.Scalar] = [
            "a", "Z", "0", ".", "@", "-", "'", "+", "<", ">", ",", ";", ":", "\"", "\\", "(", ")", "[", "]",
            " ", "\t", "\r", "\n", "\u{0}", "\u{1B}", "\u{8}", "\u{7F}", "\u{85}", "\u{A0}", "\u{200B}",
            "\u{2028}", "\u{202E}", "\u{FEFF}", "é", "ß", "İ", "日", "\u{1F600}",
        ]
        await propertyCheck(count: 3_000, input: Gen.uint64()) { seed in
            var state = seed
            func next() -> UInt64 {  // SplitMix64
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int(next() % 24) { scalars.append(alphabet[Int(next() % UInt64(alphabet.count))]) }
            let text = "x" + String(scalars) + "@example.com"
            guard let email = try? EmailAddress.normalized(text) else { return }
            #expect((try? EmailAddress.normalized(email)) == email)
            #expect(email.utf8.count <= EmailAddress.maxBytes)
            #expect(email.split(separator: "@", omittingEmptySubsequences: false).count == 2)
            #expect(!email.unicodeScalars.contains { "<>,;:\"\\()[] \t\r\n".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F })
        }
    }
}

/// Free text on a data-subject request never names a person by email: an erasure, which replaces
/// whole values, could not find one written into a sentence.
@Suite struct DSRTextTests {
    @Test func anEmailInFreeTextIsRefused() throws {
        #expect(throws: DSRText.Refusal.namesAnEmail) { try DSRText.checked("asked by bob@x.test by phone") }
        #expect(throws: DSRText.Refusal.length(max: 64)) { try DSRText.checked(String(repeating: "t", count: 65), max: DSRText.ticketLength) }
        #expect(throws: DSRText.Refusal.length(max: 500)) { try DSRText.checked("  \n") }
        #expect(try DSRText.checked("  photo ID checked on a video call\n") == "photo ID checked on a video call")
    }
}

import Foundation
import RaxxCore
import Testing

@Suite struct JSONEscapingTests {
    func escaped(_ text: String) -> String {
        var out: [UInt8] = []
        var text = text
        text.withUTF8 { JSONEscaping.append($0, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    @Test func everyTextReadsBackAsItselfInAJSONString() throws {
        let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        for text in ["", "plain", #"a "quoted" \ back\slash / slash"#, controls, "tab\tnew\nline\rcr", "é ü 漢字 🚀", "\u{7F}\u{2028}"] {
            let json = "[\"" + escaped(text) + "\"]"
            let read = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String]
            #expect(read == [text], "\(json)")
        }
    }

    @Test func escapesAsTheGeneratedEncoderSpellsThem() {
        #expect(escaped("\"\\\n\r\t") == #"\"\\\n\r\t"#)
        #expect(escaped("\u{01}\u{1F}") == #"\u0001\u001f"#)
        #expect(escaped("caf\u{E9} 🚀") == "caf\u{E9} 🚀")
    }
}

import Foundation
import RaxxCore
import RaxxWire
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

    /// C1 controls (U+0080 to U+009F) are escaped as well, by the writers and in JSON Lines: a
    /// server's string with U+009B (CSI) must not reach a terminal showing the JSON as a control.
    @Test func c1ControlsAreEscapedAndReadBack() throws {
        let text = "a\u{80}b\u{9B}31mc\u{9F}\u{A0}é"
        #expect(escaped(text) == "a\\u0080b\\u009b31mc\\u009f\u{A0}é")
        let line = try JSONLines.line(["v": text])
        #expect(line == #"{"v":"a\u0080b\u009b31mc\u009f"# + "\u{A0}é\"}")
        #expect(!line.unicodeScalars.contains { (0x80...0x9F).contains($0.value) })
        let read = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
        #expect(read == ["v": text])
        for text in ["", "plain", "\u{85}", "x\u{85}", "\u{C2}\u{85}\u{C2}"] {
            let json = "[\"" + escaped(text) + "\"]"
            #expect(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String] == [text], "\(json)")
        }
    }
}

import Foundation
import PropertyBased
import RaxxCore
import RaxxWire
import Testing

/// A record written by `JSONLineWriter` reads as `JSONLines.line` (JSONEncoder) writes it.
@Suite struct JSONLineWritableTests {
    struct Sample: Encodable, JSONLineWritable {
        var a_date: Date?
        var b_flag = false
        var c_count = 0
        var d_big: Int64 = 0
        var e_text: String?

        func write(to json: inout JSONLineWriter) {
            json.add("a_date", a_date)
            json.add("b_flag", b_flag)
            json.add("c_count", c_count)
            json.add("d_big", d_big)
            json.add("e_text", e_text)
        }
    }

    /// Through the Encodable overload, whatever else the value conforms to.
    static func encoded<T: Encodable>(_ value: T) throws -> String { try JSONLines.line(value) }

    static let samples: [Sample] = [
        Sample(),
        Sample(a_date: Date(timeIntervalSince1970: 1_795_000_000.257), b_flag: true, c_count: 0, d_big: .max, e_text: ""),
        Sample(a_date: Date(timeIntervalSince1970: 0), b_flag: false, c_count: -42, d_big: .min, e_text: "plain"),
        Sample(e_text: #"quote " backslash \ slash / "# + "tab \t newline \n return \r é ✓ 🙂 \u{2028} del \u{7f}"),
        Sample(c_count: 7, e_text: "/home/trader/.cache/raxx/http_127.0.0.1_8080/cache.sqlite"),
    ]

    @Test(arguments: samples)
    func writesWhatTheEncoderWrites(sample: Sample) throws {
        #expect(JSONLines.line(written: sample) == (try Self.encoded(sample)))
    }

    @Test func controlCharactersAsTheEncoderWritesThem() throws {
        let sample = Sample(e_text: "bell \u{7} backspace \u{8} form feed \u{c} nul \u{0} unit \u{1f}")
        #expect(JSONLines.line(written: sample) == (try Self.encoded(sample)))
    }

    /// C1 controls (a CSI, U+009B, starts a terminal escape sequence) are escaped by both writers,
    /// and the letters whose UTF-8 also starts with C2 are not.
    @Test func c1ControlsAsJSONLinesWritesThem() throws {
        let sample = Sample(e_text: "csi \u{9b}31m next line \u{85} pad \u{80} apc \u{9f} pound £ nbsp \u{a0} section §")
        let written = JSONLines.line(written: sample)
        #expect(written == (try Self.encoded(sample)))
        #expect(written.contains(#"csi \u009b31m next line \u0085 pad \u0080 apc \u009f pound £"#))
    }

    /// Numbers are written as the writer wrote them when it built a String (the code of that
    /// writer is the oracle here): whole numbers of any size, and rounded decimals.
    @Test func numbersAreWrittenAsTheStringWriterWroteThem() async {
        func oracle(_ value: Double, decimals: Int) -> String {
            var text = ""
            var scaled = (value * pow(10, Double(decimals))).rounded()
            if scaled < 0 { text += "-"; scaled = -scaled }
            let whole = Int64(scaled) / Int64(pow(10, Double(decimals)))
            let fraction = Int64(scaled) % Int64(pow(10, Double(decimals)))
            text += String(whole)
            if decimals > 0 && fraction > 0 {
                var digits = String(fraction)
                digits = String(repeating: "0", count: decimals - digits.count) + digits
                while digits.hasSuffix("0") { digits.removeLast() }
                text += "." + digits
            }
            return text
        }
        await propertyCheck(count: 3_000, input: Gen.int64(), Gen.uint64()) { whole, bits in
            var json = JSONLineWriter()
            json.add("a", whole)
            json.add("b", Int(truncatingIfNeeded: whole >> 3))
            let decimals = Int(bits % 4)
            // Latencies and prices: magnitudes up to a million, with up to six digits after the point.
            let value = Double(Int64(truncatingIfNeeded: bits >> 2) % 1_000_000_000_000) / 1_000_000
            json.add("c", value, decimals: decimals)
            #expect(json.line() == "{\"a\":\(whole),\"b\":\(Int(truncatingIfNeeded: whole >> 3)),\"c\":\(oracle(value, decimals: decimals))}\n")
        }
        var json = JSONLineWriter()
        json.add("z", 0.0, decimals: 2)
        json.add("zz", 12.05, decimals: 2)
        json.add("zzz", -0.5, decimals: 1)
        #expect(json.line() == #"{"z":0,"zz":12.05,"zzz":-0.5}"# + "\n")
    }
}

import Foundation
import RaxxCore
import RaxxWire
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The hand-written formatters every read runs per row, against the C library's own answers.
@Suite struct FastFormattingTests {
    /// What RFC3339.string must print: gmtime's civil time, milliseconds only when there are some.
    static func reference(_ date: Date) -> String {
        let totalMillis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let seconds = totalMillis >= 0 ? totalMillis / 1000 : (totalMillis - 999) / 1000
        let millis = totalMillis - seconds * 1000
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        let year = Int(parts.tm_year) + 1900
        let yearText = year < 0 ? "-" + String(format: "%04d", -year) : String(format: "%04d", year)
        return yearText + String(format: "-%02d-%02dT%02d:%02d:%02d", parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
            + (millis > 0 ? String(format: ".%03d", Int(millis)) : "") + "Z"
    }

    @Test func timestampsMatchTheCLibrary() {
        var generator = SystemRandomNumberGenerator()
        var dates = [
            0, 0.001, 0.05, 0.999, 59.5, 86_399.999, 951_782_400, 1_790_000_000.25, -1, -0.5, -86_400.001,
            253_402_300_799, -62_135_596_800, -30_610_224_000.007,
        ].map { Date(timeIntervalSince1970: $0) }
        for _ in 0..<5_000 {
            let millis = Int64.random(in: -62_135_596_800_000...253_402_300_799_000, using: &generator)
            dates.append(Date(timeIntervalSince1970: Double(millis) / 1000))
        }
        for date in dates {
            #expect(RFC3339.string(from: date) == Self.reference(date), "\(date.timeIntervalSince1970)")
        }
    }

    @Test func digitsArePaddedToTheirWidth() {
        let values: [Int64] = [0, 7, 42, 999, 1000, 123_456_789, -5, -1234, Int64.max, Int64.min]
        for value in values {
            for width in [-1, 0, 1, 2, 3, 4, 19, 20, 25] {
                var out: [UInt8] = []
                RFC3339.appendDigits(value, width: width, to: &out)
                let digits = String(value.magnitude)
                let padded = String(repeating: "0", count: max(0, min(width, 20) - digits.count)) + digits
                #expect(String(decoding: out, as: UTF8.self) == (value < 0 ? "-" : "") + padded, "\(value) width \(width)")
            }
        }
        var out = Array("x".utf8)
        RFC3339.appendDigits(12, width: 4, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "x0012")
    }
}

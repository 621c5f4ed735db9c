import Foundation
import RaxxCore
import Testing

@testable import RaxxWire

/// Reading timestamps: the common shape by hand, the same Date as the ISO 8601 parse; anything
/// else through that parse.
@Suite struct RFC3339ParseTests {
    static func foundation(_ text: String) -> Date? {
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return d }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    @Test func theCommonShapeReadsAsTheISO8601ParseDoes() throws {
        var rng = SystemRandomNumberGenerator()
        for i in 0..<20_000 {
            // 1600-01-01 to 9999-12-31, whole seconds and milliseconds, as `append` writes them.
            var millis = Int64.random(in: -11_676_096_000_000...253_402_300_799_000, using: &rng)
            if i % 3 == 0 { millis -= ((millis % 1000) + 1000) % 1000 }
            let text = RFC3339.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
            let fast = try #require(
                text.utf8.withContiguousStorageIfAvailable { RFC3339.commonDate(UnsafeRawBufferPointer($0)) } ?? nil,
                "\(text)")
            #expect(fast.timeIntervalSinceReferenceDate.bitPattern == Self.foundation(text)?.timeIntervalSinceReferenceDate.bitPattern, "\(text)")
            #expect(RFC3339.date(from: text) == fast)
        }
    }

    /// A time the random draw above once found, where the ISO 8601 parse's sum (days, then the
    /// time of day with its fraction) and seconds-plus-milliseconds differ by one ulp.
    @Test func aTimeWhereTheOrderOfTheSumShowsReadsAsTheISO8601ParseDoes() throws {
        let text = "2001-01-03T20:16:35.545Z"
        let fast = try #require(text.utf8.withContiguousStorageIfAvailable { RFC3339.commonDate(UnsafeRawBufferPointer($0)) } ?? nil)
        #expect(fast.timeIntervalSinceReferenceDate.bitPattern == Self.foundation(text)?.timeIntervalSinceReferenceDate.bitPattern)
    }

    @Test(arguments: [
        "2026-11-23T05:44:40.1Z", "2026-11-23T05:44:40.12Z", "2026-11-23T05:44:40.123456Z", "2026-11-23T05:44:40+02:00",
        "2026-11-23t05:44:40z", "2026-02-29T00:00:00Z", "2024-02-30T00:00:00Z", "2026-11-23T24:00:00Z", "2026-11-23T05:60:00Z",
        "2026-11-23T05:44:60Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "1582-10-10T00:00:00Z", "0000-01-01T00:00:00Z",
        "2026-11-23 05:44:40Z", "2026-11-23T05:44:4xZ", "2026-11-23T05:44:40.12xZ", "yesterday", "", "2026-11-23T05:44:40.123",
    ])
    func anyOtherShapeIsLeftToTheFullParse(text: String) throws {
        let fast = text.utf8.withContiguousStorageIfAvailable { RFC3339.commonDate(UnsafeRawBufferPointer($0)) } ?? nil
        #expect(fast == nil)
        #expect(RFC3339.date(from: text) == Self.foundation(text))
        #expect(text.utf8.withContiguousStorageIfAvailable { RFC3339.date(utf8: UnsafeRawBufferPointer($0)) } ?? nil == Self.foundation(text))
    }
}

import Foundation
import PropertyBased
import RaxxAPI
import RaxxTestSupport
import Testing

@testable import RaxxWire

/// The hand-written codecs held to the generated model on generated inputs: random valid values
/// of the spec's types read back identically, whichever way they are read, and random damage to
/// their bytes is refused by both the fast path and the generated decoder, or by neither (and
/// then read the same by both).
///
/// Each case is made from one random seed (PropertyBased draws it and reports it when a check
/// fails); `ModelRandom` turns it into a page, an order or a string.
@Suite struct WireDifferentialTests {
    // MARK: Sync pages

    @Test func aGeneratedPageReadsBackIdenticallyBothWays() async throws {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed throws in
            var random = ModelRandom(seed)
            let page = random.page()
            for style in EncodingStyle.allCases {
                let bytes = try style.encode(page)
                let decoded = try bytes.withUnsafeBytes { try SyncPageReader.decode($0) }
                #expect(decoded == page, "the generated decoder, \(style)")
                let fast = try bytes.withUnsafeBytes { try SyncPageReader.readAsTheStoreDoes($0) }
                #expect(fast == page, "the fast reader (or its fallback), \(style)")
            }
        }
    }

    /// The page as the sandbox writes it (compact, sorted, its fields before its changes) is one
    /// the fast reader takes whole, with no fallback.
    @Test func aCompactSortedPageNeedsNoFallback() async throws {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed throws in
            var random = ModelRandom(seed, plainText: true)
            let page = random.page()
            let bytes = try EncodingStyle.compactSorted.encode(page)
            let read = Result { try bytes.withUnsafeBytes { try SyncPageReader.read($0) } }
            switch read {
            case .success(let read):
                #expect(read == page, "\(Self.difference(read, page))")
            case .failure(let error):
                Issue.record("the fast reader left it to the decoder (\(error)): \(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    /// Strings are scanned eight bytes at a time: a quote, a backslash, a control character or a
    /// byte that is not ASCII at any place of a string of any length around that width is read
    /// as the generated decoder reads it (or left to it), and a lone byte that is not UTF-8 is
    /// refused by both.
    @Test func everyPlaceOfAStringAroundTheScannersWidthReadsAsTheDecoder() throws {
        let specials: [[UInt8]] = [[0x22], [0x5C, 0x6E], [0x5C, 0x22], [0x01], [0x1F], [0x7F], [0xC3, 0xA9], [0xFF], [0x80]]
        for length in 0...26 {
            for place in 0...length {
                for special in specials {
                    var symbol = Array(repeating: UInt8(ascii: "A"), count: length)
                    symbol.insert(contentsOf: special, at: place)
                    let bytes =
                        Array(
                            #"""
                            {"as_of":"2026-11-23T05:44:40Z","changes":[{"entity":"position","id":"pos_1","op":"upsert","position":{"avg_price":"1.5",\#
                            "id":"pos_1","qty":2,"symbol":"
                            """#
                            .utf8)
                        + symbol + Array(#"","updated_at":"2026-11-23T05:44:22Z"},"seq":1}],"cursor":1,"has_more":false,"reset":false}"#.utf8)
                    let decoded = Result { try bytes.withUnsafeBytes { try SyncPageReader.decode($0) } }
                    let fast = Result { try bytes.withUnsafeBytes { try SyncPageReader.readAsTheStoreDoes($0) } }
                    let text = "\(length) \(place) \(special): \(String(decoding: bytes, as: UTF8.self))"
                    switch (decoded, fast) {
                    case (.success(let a), .success(let b)): #expect(a == b, "\(text)")
                    case (.failure, .failure): break
                    default: Issue.record("the fast path and the decoder differ: \(text)")
                    }
                }
            }
        }
    }

    /// The first change that differs between two pages, or their fields.
    static func difference(_ a: Components.Schemas.SyncPage, _ b: Components.Schemas.SyncPage) -> String {
        for (x, y) in zip(a.changes, b.changes) where x != y { return "\(x)\n≠ \(y)" }
        return
            """
            \(a.cursor) \(a.hasMore) \(a.reset) \(a.asOf) \(String(describing: a.total)) ≠ \(b.cursor) \(b.hasMore) \(b.reset) \(b.asOf) \
            \(String(describing: b.total))
            """
    }

    @Test func damagedPagesAreRefusedByBothOrNeither() async throws {
        await propertyCheck(count: 1_000, input: Gen.uint64()) { seed throws in
            var random = ModelRandom(seed)
            let page = random.page(changes: 0...3)
            let bytes = random.damage(try EncodingStyle.allCases[random.int(0...2)].encode(page))
            let decoded = Result { try bytes.withUnsafeBytes { try SyncPageReader.decode($0) } }
            let fast = Result { try bytes.withUnsafeBytes { try SyncPageReader.readAsTheStoreDoes($0) } }
            let text = String(decoding: bytes, as: UTF8.self)
            switch (decoded, fast) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(text)")
            case (.failure, .failure): break
            case (.success, .failure(let error)): Issue.record("the fast path refused what the decoder took (\(error)): \(text)")
            case (.failure(let error), .success): Issue.record("the fast path took what the decoder refused (\(error)): \(text)")
            }
        }
    }

    // MARK: Order answers

    @Test func aGeneratedOrderReadsBackIdentically() async throws {
        await propertyCheck(count: 300, input: Gen.uint64()) { seed throws in
            var random = ModelRandom(seed)
            let order = random.order()
            for style in EncodingStyle.allCases {
                #expect(try OrderAnswerReader.order(try style.encode(order)) == order, "\(style)")
            }
        }
    }

    @Test func damagedOrdersAreRefusedByBothOrNeither() async throws {
        await propertyCheck(count: 1_000, input: Gen.uint64()) { seed throws in
            var random = ModelRandom(seed)
            let bytes = random.damage(try EncodingStyle.allCases[random.int(0...2)].encode(random.order()))
            let decoded = Result { try WireJSON.decoder().decode(Components.Schemas.Order.self, from: Data(bytes)) }
            let fast = Result { try OrderAnswerReader.order(bytes) }
            let text = String(decoding: bytes, as: UTF8.self)
            switch (decoded, fast) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(text)")
            case (.failure, .failure): break
            case (.success, .failure): Issue.record("the fast path refused what the decoder took: \(text)")
            case (.failure, .success): Issue.record("the fast path took what the decoder refused: \(text)")
            }
        }
    }

    // MARK: RFC 3339 and JSON strings

    @Test func datesRoundTripToTheMillisecondAsTheTranscoderWritesThem() async throws {
        await propertyCheck(count: 1_000, input: Gen.uint64()) { seed throws in
            var random = ModelRandom(seed)
            let date = random.date()
            let text = RFC3339.string(from: date)
            #expect(try RFC3339DateTranscoder().encode(date) == text)
            #expect(RFC3339.date(from: text) == date, "\(text)")
            let bytes = Array(text.utf8)
            #expect(bytes.withUnsafeBytes { RFC3339.date(utf8: $0) } == date, "\(text)")
            var appended: [UInt8] = []
            RFC3339.append(date, to: &appended)
            #expect(appended == bytes)
        }
    }

    @Test func quotedStringsReadBackAsTheDecoderReadsThem() async throws {
        await propertyCheck(count: 1_000, input: Gen.uint64()) { seed throws in
            var random = ModelRandom(seed)
            let s = random.text(0...24)
            var quoted = ""
            JSONLineWriter.quote(s, into: &quoted)
            #expect(try JSONDecoder().decode(String.self, from: Data(quoted.utf8)) == s, "\(quoted)")
            var escaped: [UInt8] = [UInt8(ascii: "\"")]
            var copy = s
            copy.withUTF8 { JSONEscaping.append($0, to: &escaped) }
            escaped.append(UInt8(ascii: "\""))
            #expect(try JSONDecoder().decode(String.self, from: Data(escaped)) == s)
        }
    }
}

extension SyncPageReader {
    /// What the client applies: the fast reader's values, or the generated decoder's for a page
    /// the fast reader leaves to it (as `CacheRefresher` falls back).
    static func readAsTheStoreDoes(_ bytes: UnsafeRawBufferPointer) throws -> Components.Schemas.SyncPage {
        do { return try read(bytes) } catch is Unsupported { return try decode(bytes) }
    }
}

/// The push filter's payload, taken from its line as written (`JSONMember`): on random objects
/// written with random spacing, the bytes it takes read as JSONSerialization reads the member.
@Suite struct JSONMemberDifferentialTests {
    @Test func aMemberTakenAsWrittenReadsAsTheParserReadsIt() async throws {
        await propertyCheck(count: 500, input: Gen.uint64()) { seed throws in
            var random = ModelRandom(seed)
            let payload = Self.object(&random, depth: 0)
            var line: [String: Any] = ["device_token": random.text(1...8), "payload": payload]
            if random.bool() { line["topic"] = random.text(0...8) }
            let options: JSONSerialization.WritingOptions = random.pick([[], [.prettyPrinted], [.sortedKeys], [.withoutEscapingSlashes]])
            let bytes = Array(try JSONSerialization.data(withJSONObject: line, options: options))
            let expected = try #require((try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])?["payload"] as? NSDictionary)
            guard let taken = JSONMember.compactValue(named: "payload", in: bytes) else { return }  // left to the fallback
            let read = try JSONSerialization.jsonObject(with: Data(taken)) as? NSDictionary
            #expect(read == expected, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(!taken.contains(UInt8(ascii: "\n")))
        }
    }

    static func object(_ random: inout ModelRandom, depth: Int) -> [String: Any] {
        var object: [String: Any] = [:]
        for _ in 0..<random.int(0...5) {
            object[random.text(0...6)] = value(&random, depth: depth + 1)
        }
        return object
    }

    static func value(_ random: inout ModelRandom, depth: Int) -> Any {
        switch random.int(0...(depth < 3 ? 6 : 4)) {
        case 0: return random.text(0...10)
        case 1: return random.int64()
        case 2: return random.bool()
        case 3: return NSNull()
        case 4: return Double(random.int(-1_000...1_000)) / 8
        case 5: return (0..<random.int(0...3)).map { _ in value(&random, depth: depth + 1) }
        default: return object(&random, depth: depth)
        }
    }
}

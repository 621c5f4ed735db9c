import Testing

@testable import RaxxPush

/// The push engine hands libcurl each URL taken apart: a URL to the origin the handle holds has
/// only its path set; what libcurl would read back is the URL given, whatever came before it.
@Suite struct URLPartsTests {
    func take(_ parts: URLParts, _ url: String) -> Bool {
        var url = url
        return url.withUTF8 { parts.take($0) } != nil
    }

    @Test func eachURLReadsBackAsGivenWhateverTheOneBefore() throws {
        let parts = try #require(URLParts())
        let sequence = [
            "https://127.0.0.1:8443/3/device/\(String(repeating: "ab", count: 32))",
            "https://127.0.0.1:8443/3/device/\(String(repeating: "cd", count: 32))",  // path alone
            "https://127.0.0.1:8443/3/device/ef?x=1",  // a query: parsed whole
            "https://127.0.0.1:8443/3/device/01",  // no stale query
            "https://api.push.apple.com/3/device/02",  // another origin
            "https://api.push.apple.com/3/device/03",
            "https://api.push.apple.com/3/./device/../device/04",  // dots: parsed whole
            "https://api.push.apple.com/3/device/05",
            "https://api.push.apple.com:443/3/device/06",  // another authority
            "https://api.push.apple.com/3/device/07%2F",  // an escape: parsed whole
            "https://api.push.apple.com/3/device/08",
        ]
        for url in sequence {
            #expect(take(parts, url))
            let expected = url.contains("/./") ? "https://api.push.apple.com/3/device/04" : url
            #expect(parts.text == expected)
        }
    }

    @Test func aURLLibcurlRefusesIsNotHandedOver() throws {
        let parts = try #require(URLParts())
        #expect(take(parts, "https://127.0.0.1:8443/3/device/ab"))
        #expect(!take(parts, "https://bad host/3/device/ab"))
        // The next URL to the first origin is parsed whole again, not joined to what was refused.
        #expect(take(parts, "https://127.0.0.1:8443/3/device/cd"))
        #expect(parts.text == "https://127.0.0.1:8443/3/device/cd")
    }

    @Test func plainPathsAreLettersDigitsAndAFewMarks() {
        func plain(_ path: String) -> Bool {
            var path = path
            return path.withUTF8 { URLParts.isPlainPath($0) }
        }
        #expect(plain("/3/device/0123456789abcdefABCDEF-_~"))
        for path in ["/3/./device", "/3/../x", "/a%2F", "/a?b", "/a#b", "/a b", "/a@b", "/a:b", "/é"] {
            #expect(!plain(path), "\(path)")
        }
    }
}

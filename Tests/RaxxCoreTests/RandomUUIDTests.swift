import Foundation
import RaxxCore
import Testing

@Suite struct RandomUUIDTests {
    @Test func randomUUIDsAreVersion4Variant1DistinctAndReadBack() throws {
        var seen = Set<UUID>()
        for _ in 0..<2_000 {
            let id = UUID.random()
            let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4, "version nibble of \(id)")
            #expect(bytes[8] >> 6 == 0b10, "variant bits of \(id)")
            let text = id.uuidString
            #expect(text.count == 36 && Array(text)[14] == "4")
            #expect(UUID(uuidString: text) == id)
            seen.insert(id)
        }
        #expect(seen.count == 2_000)
    }
}

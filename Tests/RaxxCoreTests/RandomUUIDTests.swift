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

    /// The text written directly reads back as a UUID of version 4, lower case as Foundation's.
    @Test func randomStringsAreLowerCaseUUIDsOfVersion4() throws {
        var seen = Set<String>()
        for _ in 0..<2_000 {
            let text = UUID.randomString()
            let id = try #require(UUID(uuidString: text), "\(text)")
            #expect(text == id.uuidString.lowercased())
            #expect(Array(text)[14] == "4" && "89ab".contains(Array(text)[19]))
            seen.insert(text)
        }
        #expect(seen.count == 2_000)
    }

    /// Drawn from many threads at once, across several refills of the pool, no two are the same.
    @Test func uuidsDrawnConcurrentlyAreAllDistinct() async {
        let perTask = 1_000, tasks = 8
        let all = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<tasks { group.addTask { (0..<perTask).map { _ in UUID.random() } } }
            return await group.reduce(into: [UUID]()) { $0 += $1 }
        }
        #expect(all.count == perTask * tasks)
        #expect(Set(all).count == perTask * tasks)
    }

    /// The pool hands out bytes once: consecutive fills never repeat a block.
    @Test func consecutiveFillsDiffer() {
        var blocks = Set<[UInt8]>()
        for _ in 0..<600 {
            var block = [UInt8](repeating: 0, count: 16)
            block.withUnsafeMutableBytes { RandomPool.fill($0) }
            blocks.insert(block)
        }
        #expect(blocks.count == 600)
    }
}

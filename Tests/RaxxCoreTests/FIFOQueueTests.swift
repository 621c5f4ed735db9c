import RaxxCore
import Testing

@Suite struct FIFOQueueTests {
    /// Order holds across the queue giving its taken slots back, whether it empties or not.
    @Test func itemsComeOutInTheOrderTheyWentIn() {
        var queue = FIFOQueue<Int>()
        var expected = 0
        var next = 0
        // Long runs without emptying (the slots are given back half-way), then emptied.
        for round in 0..<3 {
            for _ in 0..<(3_000 + round) {
                queue.append(next)
                next += 1
                if next % 3 == 0 {
                    #expect(queue.popFirst() == expected)
                    expected += 1
                }
            }
            #expect(queue.count == next - expected)
            while let item = queue.popFirst() {
                #expect(item == expected)
                expected += 1
            }
            #expect(queue.isEmpty && queue.count == 0)
        }
        for item in 0..<5 { queue.append(item) }
        _ = queue.popFirst()
        #expect(queue.removeAll() == [1, 2, 3, 4])
        #expect(queue.isEmpty && queue.popFirst() == nil)
    }
}

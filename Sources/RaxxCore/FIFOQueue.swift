/// A first-in, first-out queue over an array: taking from the front moves an index instead of
/// shifting the rest, and the taken slots are given back once they are half the array (or all of
/// it). For queues that take one item at a time at high rates (the push engine's waiting
/// transfers, the push filter's lines read ahead).
public struct FIFOQueue<Element> {
    private var items: [Element] = []
    private var head = 0

    public init() {}

    public var count: Int { items.count - head }
    public var isEmpty: Bool { head == items.count }

    public mutating func append(_ item: Element) {
        items.append(item)
    }

    /// The item at the front, taken out; nil when the queue is empty.
    public mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    /// Every item, in order, taken out.
    public mutating func removeAll() -> [Element] {
        defer {
            items.removeAll()
            head = 0
        }
        return Array(items[head...])
    }
}

extension FIFOQueue: Sendable where Element: Sendable {}

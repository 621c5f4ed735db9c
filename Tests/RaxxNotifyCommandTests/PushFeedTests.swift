import Foundation
import RaxxPush
import Synchronization
import Testing

@testable import RaxxNotifyCommand

/// The feed between `push`'s reader and the endpoint: what may be in flight, what waits, and who
/// is woken when.
@Suite struct PushFeedTests {
    static func line(_ number: Int) -> PushFeed.Line {
        (number, PushNotification(deviceToken: String(repeating: "ab", count: 32), topic: "app.raxx.ios", payload: Array("{}".utf8)))
    }

    @Test func linesAreSentAtOnceUpToTheLimitThenWaitAndGoOutInOrderAsAnswersCome() {
        let feed = PushFeed(limit: 3, backlog: 4)
        #expect((1...3).map { feed.put(Self.line($0))?.number } == [1, 2, 3])
        #expect(feed.inFlight == 3)
        #expect((4...6).compactMap { feed.put(Self.line($0))?.number } == [])
        // Each answer hands out the next waiting line, in order, and keeps the limit.
        #expect(feed.settled()?.number == 4)
        #expect(feed.settled()?.number == 5)
        #expect(feed.inFlight == 3)
        #expect(feed.settled()?.number == 6)
        #expect(feed.settled() == nil)
        #expect(feed.inFlight == 2)
        // With room in flight and nothing waiting, a new line goes at once.
        #expect(feed.put(Self.line(7))?.number == 7)
    }

    @Test func theReaderWaitsWhileTheBacklogIsFullAndIsWokenOncePerBatch() async {
        let feed = PushFeed(limit: 2, backlog: 8)
        #expect(feed.refill == 2)
        for number in 1...10 { _ = feed.put(Self.line(number)) }
        let woken = Atomic<Bool>(false)
        let reader = Task {
            await feed.room()
            woken.store(true, ordering: .sequentiallyConsistent)
        }
        while !feed.isReaderWaiting { await Task.yield() }
        // One answer frees one place in the backlog: not yet a batch.
        #expect(feed.settled()?.number == 3)
        await Task.yield()
        let early = woken.load(ordering: .sequentiallyConsistent)
        #expect(!early)
        #expect(feed.settled()?.number == 4)
        await reader.value
        let late = woken.load(ordering: .sequentiallyConsistent)
        #expect(late)
        // Room now: no waiting at all.
        await feed.room()
    }

    @Test func aClosedFeedHandsOutNothingMoreAndGivesBackWhatWaits() {
        let feed = PushFeed(limit: 1, backlog: 4)
        _ = feed.put(Self.line(1))
        for number in 2...4 { _ = feed.put(Self.line(number)) }
        #expect(feed.close().map(\.number) == [2, 3, 4])
        #expect(feed.settled() == nil)
        #expect(feed.inFlight == 0)
    }

    @Test func drainedReturnsOnlyOnceNothingIsInFlightOrWaiting() async {
        let feed = PushFeed(limit: 1, backlog: 2)
        _ = feed.put(Self.line(1))
        _ = feed.put(Self.line(2))
        let done = Atomic<Bool>(false)
        let waiter = Task {
            await feed.drained()
            done.store(true, ordering: .sequentiallyConsistent)
        }
        #expect(feed.settled()?.number == 2)
        await Task.yield()
        let early = done.load(ordering: .sequentiallyConsistent)
        #expect(!early)
        #expect(feed.settled() == nil)
        await waiter.value
        let late = done.load(ordering: .sequentiallyConsistent)
        #expect(late)
    }

    @Test func handedLinesAreCountedUntilTheyAreInTheBooks() {
        let feed = PushFeed(limit: 1, backlog: 1)
        _ = feed.put(Self.line(1))
        _ = feed.put(Self.line(2))
        #expect(feed.handing == 1)
        feed.handed()
        _ = feed.settled()
        #expect(feed.handing == 1)
        feed.handed()
        #expect(feed.handing == 0)
    }
}

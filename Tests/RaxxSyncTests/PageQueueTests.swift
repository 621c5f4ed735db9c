import Foundation
import RaxxAPI
import RaxxTestSupport
import Synchronization
import Testing

@testable import RaxxStore

/// The refresh's pages are fetched by a task of their own, ahead of the writer but never more than
/// a few pages ahead, each request carrying the cursor of the page before it.
@Suite struct PageQueueTests {
    final class Requests: Sendable {
        private let list = Mutex<[String]>([])
        var sent: [String] { list.withLock { $0 } }
        func record(_ cursor: Int64, _ rebuild: Bool) { list.withLock { $0.append("\(cursor)\(rebuild ? " rebuild" : "")") } }
    }

    /// Pages of ten changes' cursors up to 50; the page ending at 20 says the cursor was reset;
    /// the request at `failing` fails.
    static func fetch(_ requests: Requests, failing: Int64? = nil) -> @Sendable (Int64, Bool) async throws -> CacheRefresher.Page {
        { cursor, rebuild in
            requests.record(cursor, rebuild)
            if cursor == failing { throw URLError(.networkConnectionLost) }
            return .decoded(.init(changes: [], cursor: cursor + 10, hasMore: cursor + 10 < 50, reset: cursor + 10 == 20, asOf: Date()))
        }
    }

    @Test func pagesComeInOrderAndThoseAfterAResetAreRebuildPages() async throws {
        let requests = Requests()
        let queue = CacheRefresher.PageQueue(ahead: 2, from: 0, rebuilding: false, fetch: Self.fetch(requests))
        defer { queue.cancel() }
        var cursors: [Int64] = []
        while let page = try await queue.next() { cursors.append(page.cursor) }
        #expect(cursors == [10, 20, 30, 40, 50])
        #expect(requests.sent == ["0", "10", "20 rebuild", "30 rebuild", "40 rebuild"])
    }

    /// Two pages ahead, none written: the fetcher waits. Stopping the queue then ends the pages'
    /// stream, and that end comes after any page the fetcher fetched: draining it shows every
    /// page there was, late ones too, with no time given for them to come.
    @Test func theFetcherStopsWhenItIsAheadByTheBound() async throws {
        let requests = Requests()
        let queue = CacheRefresher.PageQueue(ahead: 2, from: 0, rebuilding: true, fetch: Self.fetch(requests))
        try await waitUntil { requests.sent.count >= 2 }
        queue.cancel()
        var drained: [Int64] = []
        while let page = try await queue.next() { drained.append(page.cursor) }
        #expect(drained == [10, 20], "two pages fetched, none written: the fetcher waits")
        #expect(requests.sent == ["0 rebuild", "10 rebuild"])

        // One page written: one more is fetched, and no other.
        let more = Requests()
        let next = CacheRefresher.PageQueue(ahead: 2, from: 0, rebuilding: true, fetch: Self.fetch(more))
        #expect(try await next.next()?.cursor == 10)
        try await waitUntil { more.sent.count >= 3 }
        next.cancel()
        drained = []
        while let page = try await next.next() { drained.append(page.cursor) }
        #expect(drained == [20, 30], "one page written: one more fetched")
        #expect(more.sent.count == 3)
    }

    @Test func aFailedFetchReachesTheWriterAfterThePagesBeforeIt() async throws {
        let requests = Requests()
        let queue = CacheRefresher.PageQueue(ahead: 2, from: 0, rebuilding: false, fetch: Self.fetch(requests, failing: 20))
        defer { queue.cancel() }
        #expect(try await queue.next()?.cursor == 10)
        #expect(try await queue.next()?.cursor == 20)
        await #expect(throws: URLError.self) { try await queue.next() }
        #expect(requests.sent == ["0", "10", "20 rebuild"])
    }
}

import Foundation
import RaxxAPI
@testable import RaxxStore
import Testing

/// The refresh's pages are fetched by a task of their own, ahead of the writer but never more than
/// a few pages ahead, each request carrying the cursor of the page before it.
@Suite struct PageQueueTests {
    actor Requests {
        var sent: [String] = []
        func record(_ cursor: Int64, _ rebuild: Bool) { sent.append("\(cursor)\(rebuild ? " rebuild" : "")") }
    }

    /// Pages of ten changes' cursors up to 50; the page ending at 20 says the cursor was reset;
    /// the request at `failing` fails.
    static func fetch(_ requests: Requests, failing: Int64? = nil) -> @Sendable (Int64, Bool) async throws -> CacheRefresher.Page {
        { cursor, rebuild in
            await requests.record(cursor, rebuild)
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
        #expect(await requests.sent == ["0", "10", "20 rebuild", "30 rebuild", "40 rebuild"])
    }

    @Test func theFetcherStopsWhenItIsAheadByTheBound() async throws {
        let requests = Requests()
        let queue = CacheRefresher.PageQueue(ahead: 2, from: 0, rebuilding: true, fetch: Self.fetch(requests))
        defer { queue.cancel() }
        for _ in 0..<200 where await requests.sent.count < 2 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(await requests.sent == ["0 rebuild", "10 rebuild"], "two pages fetched, none written: the fetcher waits")
        #expect(try await queue.next()?.cursor == 10)
        for _ in 0..<200 where await requests.sent.count < 3 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(await requests.sent.count == 3, "one page written: one more fetched")
    }

    @Test func aFailedFetchReachesTheWriterAfterThePagesBeforeIt() async throws {
        let requests = Requests()
        let queue = CacheRefresher.PageQueue(ahead: 2, from: 0, rebuilding: false, fetch: Self.fetch(requests, failing: 20))
        defer { queue.cancel() }
        #expect(try await queue.next()?.cursor == 10)
        #expect(try await queue.next()?.cursor == 20)
        await #expect(throws: URLError.self) { try await queue.next() }
        #expect(await requests.sent == ["0", "10", "20 rebuild"])
    }
}

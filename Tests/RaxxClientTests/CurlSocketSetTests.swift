import CCurl
import RaxxTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The push engine's record of its connections (`raxx_curl_track_sockets`): it corks them for a
/// turn of libcurl's work, so a socket it forgot to drop could be a later, unrelated descriptor.
@Suite struct CurlSocketSetTests {
    static func corked(_ fd: Int32) -> Int32 {
        var value: Int32 = -1
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &value, &size) == 0 else { return -1 }
        return value
    }

    @Test func anOpenConnectionIsRecordedCorkedAndUncorkedAndForgottenOnceClosed() throws {
        let listener = try LoopbackListener(.respond(status: 200, body: "ok"))
        try #require(raxx_curl_load() == 1)
        let set = UnsafeMutablePointer<raxx_curl_socket_set>.allocate(capacity: 1)
        set.initialize(to: raxx_curl_socket_set())
        defer { set.deallocate() }
        let handle = try #require(raxx_curl_easy_init())
        #expect(raxx_curl_track_sockets(handle, set) == CURLE_OK)
        #expect(raxx_curl_set_string(handle, CURLOPT_URL, listener.url + "/") == CURLE_OK)
        #expect(raxx_curl_set_string(handle, CURLOPT_PROXY, "") == CURLE_OK)
        #expect(raxx_curl_set_data_fn(handle, CURLOPT_WRITEFUNCTION) { _, size, count, _ in size * count } == CURLE_OK)

        #expect(raxx_curl_easy_perform(handle) == CURLE_OK)
        // The connection stays open in the handle's cache (the listener keeps it alive).
        #expect(set.pointee.count == 1)
        let fd = set.pointee.fds.0
        #expect(Self.corked(fd) == 0)
        raxx_curl_socket_set_cork(set, 1)
        #expect(Self.corked(fd) == 1)
        raxx_curl_socket_set_cork(set, 0)
        #expect(Self.corked(fd) == 0)
        // A second request reuses it: still one.
        #expect(raxx_curl_easy_perform(handle) == CURLE_OK)
        #expect(set.pointee.count == 1)

        raxx_curl_easy_cleanup(handle)
        #expect(set.pointee.count == 0)
        #expect(listener.connections == 1)
    }
}

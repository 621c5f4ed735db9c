import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import RaxxAPNs

/// One HTTP/2 connection's state, touched only on its event loop (its streams share it).
// @unchecked: confined to its channel's event loop (asserted), so it needs no lock; `desk` is passed inout.
final class PushConnection: @unchecked Sendable {
    let channel: any Channel
    var desk: PushDesk.ConnectionState
    let goAwayAfter: Int?
    /// Streams opened so far.
    private var streamsOpened = 0
    /// Set once GOAWAY is decided: the last stream processed; streams above it are refused.
    private(set) var lastStreamID: HTTP2StreamID?
    /// Streams being processed (opened at or below `lastStreamID`, not closed yet).
    private var inFlight = 0
    private var closing = false

    init(number: Int, goAwayAfter: Int?, channel: any Channel) {
        desk = .init(number: number)
        self.goAwayAfter = goAwayAfter
        self.channel = channel
    }

    /// A stream opened: true to process it, false when it is above the GOAWAY's last stream.
    /// The stream that reaches `goAwayAfter` sends the GOAWAY naming itself.
    func open(_ streamID: HTTP2StreamID) -> Bool {
        channel.eventLoop.assertInEventLoop()
        if let lastStreamID, streamID > lastStreamID { return false }
        streamsOpened += 1
        inFlight += 1
        if let goAwayAfter, lastStreamID == nil, streamsOpened >= goAwayAfter {
            lastStreamID = streamID
            let channel = self.channel
            // Sent at once, before this stream's answer: a client that waits for an answer before
            // its next request learns of the GOAWAY first and opens a new connection for it.
            let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: streamID, errorCode: .noError, opaqueData: nil))
            channel.writeAndFlush(frame, promise: nil)
            // Whatever happens to the streams below it, the connection ends within a bound.
            channel.eventLoop.assumeIsolated().scheduleTask(in: .seconds(30)) { channel.close(promise: nil) }
        }
        return true
    }

    /// A processed stream is done: its answer was written out (or it ended without one).
    func finished() {
        channel.eventLoop.assertInEventLoop()
        inFlight -= 1
        closeIfDone()
    }

    /// After a GOAWAY, closes the connection once every stream at or below it is answered and the
    /// answers are written out, after a grace second: a client closes a connection it got a GOAWAY
    /// on once its streams are done, and closing before it could read its last answers (or while
    /// its last frames are in flight, which makes the kernel reset the connection) would lose them.
    private func closeIfDone() {
        guard lastStreamID != nil, inFlight == 0, !closing else { return }
        closing = true
        let channel = self.channel
        channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
    }
}

/// Reads one request off an HTTP/2 stream (HEADERS, then DATA up to END_STREAM), has the desk
/// answer it, and writes the answer: `:status`, `apns-id`, on 200 `apns-unique-id`, otherwise a
/// JSON body with the reason.
final class PushStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let desk: PushDesk
    private let connection: PushConnection
    private var request: PushRequest?
    private var streamID: HTTP2StreamID = .rootStream
    private var processing = false
    private var answered = false

    init(desk: PushDesk, connection: PushConnection) {
        self.desk = desk
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            guard request == nil else {
                // Trailers: nothing APNs reads; the request ends with them.
                if headers.endStream { respond(context: context) }
                return
            }
            guard connection.open(streamID) else {
                // Above the GOAWAY's last stream: not processed, so the client may send it again.
                context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
                context.close(promise: nil)
                return
            }
            processing = true
            var method = "", path = ""
            var fields: [(name: String, value: String)] = []
            fields.reserveCapacity(headers.headers.count)
            for (name, value, _) in headers.headers {
                if name.hasPrefix(":") {
                    if name == ":method" { method = value } else if name == ":path" { path = value }
                } else {
                    fields.append((name.lowercased(), value))
                }
            }
            request = PushRequest(method: method, path: path, headers: fields, body: [])
            if headers.endStream { respond(context: context) }
        case .data(let data):
            guard request != nil else { return }
            if case .byteBuffer(var buffer) = data.data {
                let room = APNs.maxPayloadBytes + 1 - (request?.body.count ?? 0)
                if room > 0, let bytes = buffer.readBytes(length: min(room, buffer.readableBytes)) {
                    request?.body.append(contentsOf: bytes)
                }
            }
            if data.endStream { respond(context: context) }
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    /// Tells the connection this stream is done, once.
    private func finish() {
        guard processing else { return }
        processing = false
        connection.finished()
    }

    private func respond(context: ChannelHandlerContext) {
        guard let request, !answered else { return }
        answered = true
        let answer = desk.answer(request, connection: &connection.desk, stream: Int(streamID))
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(answer.status))
        // Every answer's ids are new: indexing them would only churn the HPACK table (and searching
        // it was a fifth of the time spent per push).
        headers.add(name: APNs.Header.id, value: answer.apnsID, indexing: .nonIndexable)
        if let uniqueID = answer.uniqueID { headers.add(name: APNs.Header.uniqueID, value: uniqueID, indexing: .nonIndexable) }
        let body = answer.body
        // The connection learns the stream is done once its answer is written out, not before.
        let written = context.eventLoop.makePromise(of: Void.self)
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in loopBoundSelf.value.finish() }
        if body.isEmpty {
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: written)
        } else {
            headers.add(name: "content-type", value: "application/json; charset=utf-8")
            headers.add(name: "content-length", value: String(body.count))
            context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: false))), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: written)
        }
        self.request = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream error (a reset, a protocol error on this stream) ends this stream only.
        context.close(promise: nil)
    }
}

import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import RaxxAPNs

/// One HTTP/2 connection's state, touched only on its event loop (its streams share it).
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
            // Sent from the next tick: not from inside the HTTP/2 handler's read of this stream.
            let channel = self.channel
            channel.eventLoop.assumeIsolated().execute {
                let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: streamID, errorCode: .noError, opaqueData: nil))
                channel.writeAndFlush(frame, promise: nil)
                self.closeIfDone()
            }
            // Whatever happens to the streams below it, the connection ends within a bound.
            channel.eventLoop.assumeIsolated().scheduleTask(in: .seconds(30)) { channel.close(promise: nil) }
        }
        return true
    }

    /// A processed stream closed.
    func closed() {
        channel.eventLoop.assertInEventLoop()
        inFlight -= 1
        closeIfDone()
    }

    /// After a GOAWAY, closes the connection once every stream at or below it is answered.
    private func closeIfDone() {
        guard lastStreamID != nil, inFlight == 0, !closing else { return }
        closing = true
        channel.close(promise: nil)
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
        if processing {
            processing = false
            connection.closed()
        }
        context.fireChannelInactive()
    }

    private func respond(context: ChannelHandlerContext) {
        guard let request, !answered else { return }
        answered = true
        let answer = desk.answer(request, connection: &connection.desk, stream: Int(streamID))
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(answer.status))
        headers.add(name: APNs.Header.id, value: answer.apnsID)
        if let uniqueID = answer.uniqueID { headers.add(name: APNs.Header.uniqueID, value: uniqueID) }
        let body = answer.body
        if body.isEmpty {
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
        } else {
            headers.add(name: "content-type", value: "application/json; charset=utf-8")
            headers.add(name: "content-length", value: String(body.count))
            context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: false))), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(buffer), endStream: true))), promise: nil)
        }
        self.request = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream error (a reset, a protocol error on this stream) ends this stream only.
        context.close(promise: nil)
    }
}

import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Requests that NIO's HTTP/1 parser rejects (a malformed request line or header, a bad
/// Content-Length, a broken chunked body) never reach a handler: Hummingbird answers them with a
/// bare 400 and closes the connection. Between the HTTP codec and the application, this handler
/// turns that bare answer into the problem+json every other error gets.
final class ParseErrorProblemHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    static let problem = ProblemError(
        400, code: .badRequest, title: "The request is not valid HTTP.",
        detail: "The request line, a header or the body's framing could not be parsed.")

    /// The problem's body, encoded once.
    static let body: [UInt8] = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(problem.body)).map(Array.init)
            ?? Array(#"{"code":"bad_request","status":400,"title":"The request is not valid HTTP."}"#.utf8)
    }()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // The parse-error answer: 400, nothing in it, closing; every answer of the application has a type.
        guard case .head(let head) = unwrapOutboundIn(data), head.status == .badRequest,
            head.headerFields[.contentLength] == "0", head.headerFields[.contentType] == nil
        else {
            context.write(data, promise: promise)
            return
        }
        var fields = head.headerFields
        fields[.contentType] = "application/problem+json"
        fields[.contentLength] = "\(Self.body.count)"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .badRequest, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: Self.body))), promise: promise)
    }
}

import Foundation
import RaxxCore

/// The one place errors are written: a person's sentence (and hint) on stderr, or with JSON
/// output one object `{"error":{"code":…,"message":…,"hint":…}}` on stderr.
public struct Reporter: Sendable {
    public var tool: String
    public var format: OutputFormat

    public init(tool: String, format: OutputFormat) {
        self.tool = tool
        self.format = format
    }

    private struct Envelope: Encodable {
        struct Body: Encodable { var code: String; var message: String; var hint: String? }
        var error: Body
    }

    public func render(_ error: RaxxError) -> String {
        switch format {
        case .json:
            let envelope = Envelope(error: .init(code: error.code, message: error.message, hint: error.hint))
            return ((try? JSONLines.line(envelope)) ?? #"{"error":{"code":"internal","message":"unreportable error"}}"#) + "\n"
        case .text:
            var text = "\(tool): \(TerminalText.printable(error.message, keepingNewlines: true))\n"
            if let hint = error.hint { text += "hint: \(TerminalText.printable(hint, keepingNewlines: true))\n" }
            return text
        }
    }

    /// Writes the error and answers the exit status to leave with.
    @discardableResult
    public func report(_ error: RaxxError, to io: CommandIO) -> ExitStatus {
        io.stdout.flush()
        io.stderr.write(render(error))
        io.stderr.flush()
        return error.status
    }
}

import Foundation

/// A sandbox's Maildir, read as a person reads their email: what was sent to whom, and the
/// one-time code in a message.
public struct Mailbox: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    public struct Message: Sendable, Equatable {
        public var to: String
        public var subject: String
        public var body: String
        /// The message as delivered (RFC 5322, CRLF line ends).
        public var raw: String
        /// The one-time code in the body: a line of 6 to 10 digits alone.
        public var code: String? {
            body.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .first { (6...10).contains($0.count) && $0.allSatisfy { $0.isASCII && $0.isNumber } }
        }
    }

    /// Every message delivered (in `new/` and `cur/`), oldest first; only those to `email` when given.
    public func messages(to email: String? = nil) -> [Message] {
        var found: [(name: String, message: Message)] = []
        for folder in ["new", "cur"] {
            let path = directory + "/" + folder
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                guard let raw = try? String(contentsOfFile: path + "/" + name, encoding: .utf8),
                    let split = raw.range(of: "\r\n\r\n")
                else { continue }
                var to = "", subject = ""
                for line in raw[..<split.lowerBound].components(separatedBy: "\r\n") {
                    if line.hasPrefix("To: ") { to = String(line.dropFirst(4)).trimmingCharacters(in: CharacterSet(charactersIn: "<>")) }
                    if line.hasPrefix("Subject: ") { subject = String(line.dropFirst(9)) }
                }
                let body = raw[split.upperBound...].replacingOccurrences(of: "\r\n", with: "\n")
                found.append((name, Message(to: to, subject: subject, body: body, raw: raw)))
            }
        }
        // Names begin with the second of delivery; the rest keeps them unique, not ordered.
        return found.sorted { $0.name < $1.name }.map(\.message).filter { email == nil || $0.to == email!.lowercased() }
    }

    /// The code of the first message to `email` after the first `after` of them, once it has come:
    /// waits while `waiting()` says so, up to `timeout` seconds; nil if none came.
    public func code(for email: String, after: Int, timeout: Double = 30, while waiting: () -> Bool = { true }) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            let messages = messages(to: email)
            if messages.count > after, let code = messages[after...].compactMap(\.code).first { return code }
            usleep(10_000)
        } while waiting() && Date() < deadline
        return nil
    }
}

extension Mailbox {
    public struct NoCode: Error, CustomStringConvertible {
        public var email: String
        public var description: String { "no code was emailed to \(email)" }
    }

    /// What a person does when a registration asks for the emailed code (an in-process sandbox
    /// has written it by the time its answer comes): the code in the newest message to the address.
    public var codePrompt: @Sendable (_ email: String, _ digits: Int) throws -> String {
        { email, _ in
            guard let code = messages(to: email).last?.code else { throw NoCode(email: email) }
            return code
        }
    }
}

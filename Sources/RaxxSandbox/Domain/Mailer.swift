import Foundation
import GRDB
import RaxxDomain
import Synchronization

/// One email: email is the platform's only contact channel.
struct Mail: Sendable, Equatable {
    var to: String
    var subject: String
    /// Plain text. A one-time code is a run of digits on a line of its own.
    var body: String
}

/// Sends the sandbox's email as the platform does, one RFC 5322 message per email, into a Maildir
/// (`tmp/`, `new/`, `cur/`; a message is written in `tmp/` and renamed into `new/`, so a reader
/// never sees half of one). The folders are 0700 and the messages 0600 whatever the umask: they
/// carry one-time codes.
///
/// Mail about a change is sent from inside the change's transaction with `send(_:_:)`: it is
/// delivered once the transaction commits, and never when it rolls back.
public final class Mailer: Sendable {
    public let directory: String
    /// Messages delivered so far (for their names' order).
    private let sent = Atomic<Int>(0)
    static let from = "Raxx <no-reply@raxx.app>"

    /// The Maildir at `directory`, made at the first message (or by `prepare`).
    public init(directory: String) {
        self.directory = directory
    }

    /// A Maildir of its own in the temporary folder (for a database in memory: most never send one,
    /// and nothing is made until one does).
    public static func temporary() -> Mailer {
        Mailer(directory: FileManager.default.temporaryDirectory.appendingPathComponent("raxx-sandbox-mail-\(UUID().uuidString)").path)
    }

    /// Makes the Maildir now (or narrows it to 0700): `raxx-sandbox serve` fails at start, not at
    /// the first email, when it cannot.
    public func prepare() throws { try makeFolders() }

    private func makeFolders() throws {
        for folder in [directory, directory + "/tmp", directory + "/new", directory + "/cur"] {
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw MailError(path: folder, reason: String(cString: strerror(errno)))
            }
            guard chmod(folder, 0o700) == 0 else { throw MailError(path: folder, reason: String(cString: strerror(errno))) }
        }
    }

    public struct MailError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot write mail to \(path): \(reason)" }
    }

    /// Delivers `mail` when `db`'s transaction commits.
    func send(_ db: Database, _ mail: Mail) {
        db.afterNextTransaction(onCommit: { [self] _ in try? deliver(mail, at: Date()) })
    }

    /// Writes `mail` into `new/` now.
    func deliver(_ mail: Mail, at date: Date) throws {
        // Every address was validated where it came in; one that was not never reaches a header.
        // (One stored before the rule, in capitals, is mailed as the rule writes it.)
        guard let to = try? EmailAddress.normalized(mail.to) else { throw MailError(path: directory, reason: "refusing to mail an invalid address") }
        var mail = mail
        mail.to = to
        try makeFolders()
        // Maildir's unique name, which also sorts in the order of delivery: the time to the
        // microsecond, then this mailer's count (two messages of one microsecond), then a UUID.
        let micros = Int64(date.timeIntervalSince1970 * 1_000_000)
        let count = sent.add(1, ordering: .relaxed).newValue
        let name = String(format: "%lld.M%06lldQ%08d.%@.raxx-sandbox", micros / 1_000_000, micros % 1_000_000, count, UUID().uuidString)
        let temporary = directory + "/tmp/" + name
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw MailError(path: temporary, reason: String(cString: strerror(errno))) }
        let bytes = Array(Self.message(mail, date: date, id: name).utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        _ = fchmod(fd, 0o600)
        _ = fsync(fd)
        close(fd)
        guard written == bytes.count, rename(temporary, directory + "/new/" + name) == 0 else {
            unlink(temporary)
            throw MailError(path: temporary, reason: "incomplete write")
        }
    }

    /// The RFC 5322 text of `mail` (CRLF line ends; the body in UTF-8, 8bit).
    static func message(_ mail: Mail, date: Date, id: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let headers = [
            "From: \(from)",
            "To: <\(mail.to)>",
            "Subject: \(mail.subject)",
            "Date: \(formatter.string(from: date))",
            "Message-ID: <\(id)@sandbox.raxx.app>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit",
        ]
        let body = mail.body.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        return headers.joined(separator: "\r\n") + "\r\n\r\n" + body + "\r\n"
    }
}

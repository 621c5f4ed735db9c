import Foundation
import HTTPTypes
import RaxxAPI
import RaxxCore

/// `RAXX_DEBUG=api`: every request to Raptor and its answer on stderr, as gh's `GH_DEBUG=api`
/// shows them: the method and URL, the status and how long it took, the header fields and the
/// bodies. Secrets never show: bearer and renewal tokens, step-up grants, PINs, one-time codes,
/// passkey assertions and attestations, and device tokens are replaced by `[redacted]`, in header
/// fields and in JSON bodies alike (a body that is not JSON shows only its size). The bodies of
/// the exchanges that carry a data subject's personal data (`personalData`) show only their size.
public struct APITrace: Sendable {
    /// Where each exchange's lines go (stderr for the tools; a buffer in tests).
    let write: @Sendable (String) -> Void

    public init(write: @escaping @Sendable (String) -> Void) { self.write = write }

    /// Writes to this process's stderr, one exchange at a time.
    public static let standardError = APITrace { text in
        text.utf8CString.withUnsafeBufferPointer { buffer in
            var offset = 0, left = buffer.count - 1
            while left > 0 {
                let n = Glibc.write(2, buffer.baseAddress! + offset, left)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                offset += n
                left -= n
            }
        }
    }

    /// Header fields whose values are secrets.
    static let secretFields: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie", "raxx-step-up-grant"]

    /// JSON members whose values are secrets (tokens, grants, PINs and codes, what a passkey signs
    /// or attests, APNs device tokens), by their names in the spec.
    static let secretMembers: Set<String> = [
        "access_token", "renewal_token", "refresh_token", "token", "grant", "step_up_grant", "pin", "otp",
        "signature", "authenticatorData", "clientDataJSON", "attestationObject", "userHandle", "passphrase",
    ]

    /// The operations whose bodies are a data subject's personal data, by their ids in the spec:
    /// the export of everything held about the subject (which raxx-dsr encrypts, and never writes
    /// to a terminal), the audit trails, and the data-subject requests, which name their subject
    /// (`DSRRequest.subject`, the email; and the email a request is opened for).
    static let personalData: Set<String> = [
        Operations.ExportDSRData.id,
        Operations.ListSubjectAuditEvents.id, Operations.ListAuditEvents.id,
        Operations.CreateDSRRequest.id, Operations.ListDSRRequests.id, Operations.GetDSRRequest.id, Operations.VerifyDSRIdentity.id,
        Operations.ExtendDSRRequest.id, Operations.CloseDSRRequest.id, Operations.ConfirmDSRExport.id, Operations.ApplyDSRErasure.id,
    ]

    /// The reason phrases of the statuses Raptor answers with.
    static let reasons: [Int: String] = [
        200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 301: "Moved Permanently", 302: "Found", 304: "Not Modified",
        400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 409: "Conflict",
        410: "Gone", 412: "Precondition Failed", 413: "Content Too Large", 422: "Unprocessable Content", 429: "Too Many Requests",
        500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
    ]

    /// The most of a body shown, in bytes.
    static let bodyLimit = 16 << 10

    func request(operationID: String, method: String, url: String, fields: HTTPFields, body: [UInt8]?) {
        var text = "> \(method) \(Self.shown(url, of: operationID))\n"
        for field in fields { text += "> \(field.name.rawName): \(Self.value(of: field.name.rawName, field.value))\n" }
        if let body { text += Self.render(body, of: operationID) }
        write(text)
    }

    func response(operationID: String, status: Int, fields: [(name: String, value: String)], body: [UInt8], elapsed: Duration) {
        let reason = Self.reasons[status].map { " " + $0 } ?? ""
        var text = "< \(status)\(reason) (\(Self.milliseconds(elapsed)) ms)\n"
        for (name, value) in fields { text += "< \(name): \(Self.value(of: name, value))\n" }
        if !body.isEmpty { text += Self.render(body, of: operationID) }
        write(text + "\n")
    }

    func failure(_ detail: String, elapsed: Duration) {
        write("< no answer (\(Self.milliseconds(elapsed)) ms): \(detail)\n\n")
    }

    static func milliseconds(_ d: Duration) -> Int {
        Int((Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15).rounded())
    }

    static func value(of name: String, _ value: String) -> String {
        guard secretFields.contains(name.lowercased()) else { return value }
        if value.lowercased().hasPrefix("bearer ") { return "Bearer [redacted]" }
        return "[redacted]"
    }

    /// A body of `operationID` as it shows: its size alone when it is personal data; otherwise
    /// JSON with its secrets redacted (cut at `bodyLimit`), or its size.
    static func render(_ body: [UInt8], of operationID: String) -> String {
        guard !personalData.contains(operationID) else { return "<body: \(grouped(body.count)) bytes, personal data not shown>\n" }
        return render(body)
    }

    /// A URL as it shows: a personal-data operation's query (`?email=` of a subject's audit trail)
    /// is not shown.
    static func shown(_ url: String, of operationID: String) -> String {
        guard personalData.contains(operationID), let query = url.firstIndex(of: "?") else { return url }
        return url[..<query] + "?[personal data not shown]"
    }

    /// 12345 as "12,345".
    static func grouped(_ n: Int) -> String {
        var digits = String(n.magnitude), out = ""
        while digits.count > 3 {
            out = "," + String(digits.suffix(3)) + out
            digits.removeLast(3)
        }
        return (n < 0 ? "-" : "") + digits + out
    }

    /// A body as it shows: JSON with its secrets redacted (cut at `bodyLimit`), or its size.
    static func render(_ body: [UInt8]) -> String {
        guard let json = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(withJSONObject: redacted(json), options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return "[\(body.count) bytes, not JSON]\n" }
        guard data.count > bodyLimit else { return String(decoding: data, as: UTF8.self) + "\n" }
        return String(decoding: data.prefix(bodyLimit), as: UTF8.self) + "… (\(data.count - bodyLimit) more bytes)\n"
    }

    /// A one-time code is `code` made of digits; a problem's `code` (`step_up_required`) shows.
    static func isSecret(_ key: String, _ value: Any) -> Bool {
        if secretMembers.contains(key) { return true }
        guard key == "code", let text = value as? String else { return false }
        return !text.isEmpty && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber)
    }

    static func redacted(_ value: Any) -> Any {
        switch value {
        case let object as [String: Any]:
            var out: [String: Any] = [:]
            for (key, member) in object { out[key] = isSecret(key, member) ? "[redacted]" : redacted(member) }
            return out
        case let array as [Any]:
            return array.map(redacted)
        default:
            return value
        }
    }
}

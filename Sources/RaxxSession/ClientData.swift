import Crypto
import Foundation

/// The WebAuthn client's part: the collected client data (clientDataJSON) that the authenticator
/// signs over, with the origin derived from the relying party ID.
enum ClientData {
    /// `{"type":…,"challenge":…,"origin":…,"crossOrigin":false}`, in the member order browsers use.
    static func json(type: String, challenge: String, rpID: String) -> [UInt8] {
        let text = #"{"type":\#(quoted(type)),"challenge":\#(quoted(challenge)),"origin":\#(quoted("https://" + rpID)),"crossOrigin":false}"#
        return Array(text.utf8)
    }

    static func hash(_ clientDataJSON: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: Data(clientDataJSON))) }

    private static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

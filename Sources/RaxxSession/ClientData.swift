import Crypto
import Foundation
import RaxxCore

/// The WebAuthn client's part: the collected client data (clientDataJSON) that the authenticator
/// signs over, with the origin derived from the relying party ID.
enum ClientData {
    /// `{"type":…,"challenge":…,"origin":…,"crossOrigin":false}`, in the member order browsers use.
    static func json(type: String, challenge: String, rpID: String) -> [UInt8] {
        let text = #"{"type":\#(quoted(type)),"challenge":\#(quoted(challenge)),"origin":\#(quoted(APIEndpoint.clientOrigin(rpID: rpID))),"crossOrigin":false}"#
        return Array(text.utf8)
    }

    static func hash(_ clientDataJSON: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: Data(clientDataJSON))) }

    private static func quoted(_ s: String) -> String {
        var out = ""
        JSONLineWriter.quote(s, into: &out)
        return out
    }
}

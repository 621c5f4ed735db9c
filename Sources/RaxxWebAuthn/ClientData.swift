import Crypto
import Foundation
import RaxxCore
import RaxxWire

/// The collected client data (clientDataJSON) an assertion or attestation signs over: written by
/// the client, parsed and checked by the relying party.
public enum ClientData {
    /// `{"type":…,"challenge":…,"origin":…,"crossOrigin":false}`, in the member order browsers use.
    public static func json(type: String, challenge: String, origin: String) -> [UInt8] {
        let text = #"{"type":\#(quoted(type)),"challenge":\#(quoted(challenge)),"origin":\#(quoted(origin)),"crossOrigin":false}"#
        return Array(text.utf8)
    }

    /// SHA-256 of clientDataJSON: what the authenticator signs after the authenticator data.
    public static func hash(_ clientDataJSON: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: Data(clientDataJSON))) }

    /// clientDataJSON as the relying party reads it.
    public struct Collected: Decodable, Sendable {
        public var type: String
        public var challenge: String
        public var origin: String
        public var crossOrigin: Bool?
    }

    private static func quoted(_ s: String) -> String {
        var out = ""
        JSONLineWriter.quote(s, into: &out)
        return out
    }
}

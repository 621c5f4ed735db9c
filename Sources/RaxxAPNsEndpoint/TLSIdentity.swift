import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate authority made at start and the server certificate it signs (SANs 127.0.0.1, ::1
/// and localhost). The keys live in memory only and end with the process; only the CA's
/// certificate is written out, for clients to trust (`curl --cacert`, `raxx-notify push --ca-file`).
public struct TLSIdentity: Sendable {
    /// The CA certificate, PEM.
    public let caPEM: String
    /// The server certificate, PEM.
    public let leafPEM: String
    /// The server key, PEM (PKCS#8), in memory only.
    let leafKeyPEM: String

    public init(now: Date = Date()) throws {
        let caKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName {
            OrganizationName("Raxx sandbox")
            CommonName("raxx-sandbox apns local CA")
        }
        let leafName = try DistinguishedName {
            OrganizationName("Raxx sandbox")
            CommonName("localhost")
        }
        let notBefore = now.addingTimeInterval(-3600)
        let notAfter = now.addingTimeInterval(30 * 24 * 3600)
        let caPublic = Certificate.PublicKey(caKey.publicKey)
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)
        let caKeyID = SubjectKeyIdentifier(hash: caPublic)
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: caPublic, notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                caKeyID
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: leafPublic, notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: caName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"),
                    .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                    .ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
                ])
                SubjectKeyIdentifier(hash: leafPublic)
                AuthorityKeyIdentifier(keyIdentifier: caKeyID.keyIdentifier)
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey)
        )
        caPEM = try ca.serializeAsPEM().pemString
        leafPEM = try leaf.serializeAsPEM().pemString
        leafKeyPEM = leafKey.pemRepresentation
    }

    /// Writes the CA certificate to `directory`/ca.pem (mode 0644), creating the folder if needed,
    /// through a temporary file and a rename so a reader never sees half of it.
    @discardableResult
    public func writeCA(to directory: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = (directory as NSString).appendingPathComponent("ca.pem")
        let temporary = path + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(caPEM.utf8), attributes: [.posixPermissions: 0o644]) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary])
        }
        guard rename(temporary, path) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: message])
        }
        return path
    }

    /// The server's TLS configuration: TLS 1.2 or later, ALPN h2 only.
    func serverConfiguration() throws -> TLSConfiguration {
        let certificate = try NIOSSLCertificate(bytes: Array(leafPEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(leafKeyPEM.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["h2"]
        return configuration
    }
}

import CSodium
import Foundation
import RaxxCore
import RaxxSecrets

/// The key that seals the keystore: bound to a device secret kept in a file of its own (apart from
/// the keystore) and to the machine's identity, so the same files on another machine do not open.
public struct DeviceKey: Sendable {
    /// The device secret's file, as a path (the keystore's reads make no URL).
    public let secretPath: String
    public var secretURL: URL { URL(fileURLWithPath: secretPath) }
    public let machineIDPath: String
    /// The rule the secret's folder is held to (by default, that folder as its own root).
    public let folders: PrivateFolders

    public static let defaultMachineIDPaths = ["/etc/machine-id", "/var/lib/dbus/machine-id"]

    public init(secretURL: URL, machineIDPath: String? = nil, folders: PrivateFolders? = nil) {
        self.init(secretPath: secretURL.path, machineIDPath: machineIDPath, folders: folders)
    }

    public init(secretPath: String, machineIDPath: String? = nil, folders: PrivateFolders? = nil) {
        self.secretPath = secretPath
        self.folders = folders ?? PrivateFolders(roots: [(secretPath as NSString).deletingLastPathComponent])
        self.machineIDPath =
            machineIDPath
            ?? Self.defaultMachineIDPaths.first { access($0, R_OK) == 0 }
            ?? Self.defaultMachineIDPaths[0]
    }

    /// This machine's identity.
    func machineID() throws(RaxxError) -> String {
        guard let text = try? String(contentsOfFile: machineIDPath, encoding: .utf8),
            case let id = Self.trimmingWhitespace(text), !id.isEmpty
        else {
            throw RaxxError(
                code: .machineIDMissing, message: "This machine has no identity (\(machineIDPath) is missing or empty), so the keystore cannot be bound to it.",
                hint: "Create it with systemd-machine-id-setup (or dbus-uuidgen --ensure).")
        }
        return id
    }

    /// `text` without white space and newlines at either end: what `trimmingCharacters(in:
    /// .whitespacesAndNewlines)` trims (the scalars with Unicode's White_Space property, and U+200B,
    /// which Foundation's set also holds), without Foundation's character sets: every read of the
    /// keystore comes through here.
    static func trimmingWhitespace(_ text: String) -> String {
        func trimmed(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace || scalar == "\u{200B}" }
        var scalars = Substring(text).unicodeScalars
        while let first = scalars.first, trimmed(first) { scalars.removeFirst() }
        while let last = scalars.last, trimmed(last) { scalars.removeLast() }
        return String(scalars)
    }

    public var secretExists: Bool { SecureFile.exists(path: secretPath) }

    /// The keystore key; creates the device secret when `create` is true and there is none.
    public func keystoreKey(create: Bool) throws(RaxxError) -> SecretBytes {
        try Sodium.ensureReady()
        let secret: SecretBytes
        if let existing = try readSecret() {
            secret = existing
        } else if create {
            secret = try Sodium.randomBytes(32)
            try SecureFile.writeAtomically(secret, to: secretURL, in: folders)
        } else {
            throw RaxxError(
                code: .deviceSecretMissing, message: "This device's secret (\(secretPath)) is missing, so the keystore cannot be opened.",
                hint: "Sign in again after: raxx-auth logout --forget-device")
        }
        let context = Array("raxx-keystore-v1\u{0}".utf8) + Array(try machineID().utf8)
        let key = SecretBytes(count: 32)
        key.withUnsafeMutableBytes { out in
            secret.withUnsafeBytes { k in
                _ = crypto_generichash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                    context, UInt64(context.count),
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
            }
        }
        secret.wipe()
        return key
    }

    private func readSecret() throws(RaxxError) -> SecretBytes? {
        guard secretExists else { return nil }
        try SecureFile.checkPrivate(path: secretPath)
        let bytes = try SecureFile.read(path: secretPath)
        guard bytes.count == 32 else {
            throw RaxxError(
                code: .deviceSecretDamaged, message: "This device's secret (\(secretPath)) is damaged.",
                hint: "Sign in again after: raxx-auth logout --forget-device")
        }
        return bytes
    }

    /// A short public fingerprint of a keystore key, to tell "another machine" from "damaged".
    static func fingerprint(of key: SecretBytes) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        let label = Array("raxx-keystore-fingerprint-v1".utf8)
        key.withUnsafeBytes { k in
            _ = crypto_generichash(&out, 16, label, UInt64(label.count), k.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
        }
        return out
    }
}

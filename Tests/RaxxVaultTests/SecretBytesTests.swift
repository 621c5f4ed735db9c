import RaxxSecrets
import RaxxVault
import Testing

@Suite struct SecretBytesTests {
    @Test func randomBytesAreRandom() throws {
        let a = try Sodium.randomBytes(32), b = try Sodium.randomBytes(32)
        #expect(a.count == 32)
        #expect(!a.isEqual(to: b))
        #expect(a.withUnsafeBytes { $0.contains { $0 != 0 } })
    }

    @Test func wipeZeroesTheBytes() {
        let secret = SecretBytes(copying: [1, 2, 3, 4, 5])
        #expect(secret.withUnsafeBytes { Array($0) } == [1, 2, 3, 4, 5])
        secret.wipe()
        #expect(secret.withUnsafeBytes { Array($0) } == [0, 0, 0, 0, 0])
    }

    @Test func comparesByContent() {
        #expect(SecretBytes(copying: [9, 9]).isEqual(to: SecretBytes(copying: [9, 9])))
        #expect(!SecretBytes(copying: [9, 9]).isEqual(to: SecretBytes(copying: [9, 8])))
        #expect(!SecretBytes(copying: [9]).isEqual(to: SecretBytes(copying: [9, 9])))
        #expect(SecretBytes(count: 0).isEqual(to: SecretBytes(copying: [])))
    }

    @Test func neverPrintsItsContent() {
        let secret = SecretBytes(copying: Array("hunter2".utf8))
        #expect("\(secret)" == "SecretBytes(7 bytes, redacted)")
        #expect(!String(reflecting: secret).contains("hunter2"))
    }
}

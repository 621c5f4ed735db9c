import Foundation
import RaxxClient
import RaxxTestSupport
import Testing

/// The authenticator's output, verified by a standard relying-party library (py_webauthn), so the
/// tool signs in against any Raptor, not only this sandbox.
@Suite(.blocking) struct InteropTests {
    @Test func pyWebAuthnVerifiesRegistrationAndAssertion() async throws {
        let rig = try AuthRig()
        let recorder = Recorder()
        try await rig.run { url in
            let ceremonies = try rig.ceremonies(url, recorder: recorder)
            _ = try await ceremonies.register(email: "t@example.com", pin: goodPIN, code: rig.code)
            _ = try await ceremonies.login(email: nil, pin: goodPIN)
        }
        let registration = rig.folder.appendingPathComponent("registration.json")
        let authentication = rig.folder.appendingPathComponent("authentication.json")
        try Data(try #require(recorder.body(of: "registerVerify"))).write(to: registration)
        try Data(try #require(recorder.body(of: "loginVerify"))).write(to: authentication)

        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/webauthn_verify.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, registration.path, authentication.path, "localhost", "https://localhost"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains(#""registration": "verified""#))
        #expect(output.contains(#""user_verified": true"#))
    }
}

import Foundation
import RaxxSandboxTestSupport
import RaxxTestSupport
import Testing

/// An in-process sandbox started by a `.blocking` test (InteropTests) must not depend on the
/// lanes: the end-to-end suites hold them while their tools run. In fresh-clone CI (2026-11-23)
/// InteropTests' sandbox answered nothing for 60 s while they did.
@Suite(.blocking) struct InProcessSandboxLanesTests {
    @Test func aSandboxStartedOnTheLanesAnswersWhileEveryLaneIsHeld() async throws {
        try await withSandbox { url in
            #expect(BlockingLanes.isCurrent)
            // Every other lane held in a synchronous wait, as an end-to-end test holds one while its
            // tool runs; this test then holds its own lane while curl waits for the answer.
            let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            for _ in 1..<BlockingLanes.count {
                Task(executorPreference: BlockingLanes.shared) {
                    held.signal()
                    release.wait()
                }
            }
            for _ in 1..<BlockingLanes.count { held.wait() }
            defer { for _ in 1..<BlockingLanes.count { release.signal() } }

            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            curl.arguments = [
                "curl", "--silent", "--max-time", "10", "--output", "/dev/null", "--write-out", "%{http_code}",
                url.appendingPathComponent("api/health").absoluteString,
            ]
            let out = Pipe()
            curl.standardOutput = out
            try curl.run()
            let status = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            curl.waitUntilExit()
            #expect(curl.terminationStatus == 0 && status == "200", "curl exited \(curl.terminationStatus), status \(status)")
        }
    }
}

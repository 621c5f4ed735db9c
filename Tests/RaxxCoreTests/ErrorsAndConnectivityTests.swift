import Foundation
import RaxxCore
import RaxxWire
import Testing

@Suite struct ExitStatusTests {
    @Test func matchTheSuiteConvention() {
        let expected: [RaxxCore.ExitStatus: Int32] = [
            .ok: 0, .failure: 1, .cancelled: 2, .stale: 3, .signInRequired: 4, .usage: 64, .dataError: 65,
            .unavailable: 69, .temporary: 75, .notPermitted: 77, .interrupted: 130, .terminated: 143,
        ]
        for status in RaxxCore.ExitStatus.allCases { #expect(status.rawValue == expected[status]) }
        #expect(expected.count == RaxxCore.ExitStatus.allCases.count)
    }

    @Test func offlineErrorUsesTheStandardMessage() {
        for state in [Connectivity.offlineHard, .offlineSoft] {
            let e = RaxxError.offline(state)
            #expect(e.message == "This action requires an internet connection. Try again when online.")
            #expect(e.status == .unavailable)
            #expect(!e.message.contains("HTTP"))
        }
        #expect(RaxxError.offline(.offlineHard).code == "offline")
        #expect(RaxxError.offline(.offlineSoft).code == "unavailable")
    }

    @Test func badInputNamesLineAndField() {
        let e = RaxxError.badInput(line: 3, field: "qty", "must be a positive whole number")
        #expect(e.message == "line 3, field 'qty': must be a positive whole number")
        #expect(e.status == .dataError)
        #expect(RaxxError.badInput("empty input").message == "empty input")
    }

    @Test func signInRequiredTellsWhatToRun() {
        #expect(RaxxError.signInRequired.message == "Sign in again: raxx-auth login")
        #expect(RaxxError.signInRequired.status == .signInRequired)
    }
}

@Suite struct ConnectivityTests {
    @Test(arguments: [
        (200, Connectivity.online), (201, .online), (400, .online), (401, .online), (404, .online),
        (500, .online), (501, .online), (429, .offlineSoft), (502, .offlineSoft), (503, .offlineSoft),
        (504, .offlineSoft),
    ])
    func classifiesStatuses(status: Int, expected: Connectivity) {
        #expect(Connectivity.classify(httpStatus: status) == expected)
    }

    @Test func requirementsDescribeThemselves() {
        #expect(ConnectivityRequirement.offlineCapable.helpLine.contains("never touches the network"))
        #expect(ConnectivityRequirement.networkRequired.helpLine.contains("exits 69"))
        #expect(Connectivity.offlineHard.isOffline && Connectivity.offlineSoft.isOffline)
        #expect(!Connectivity.online.isOffline && !Connectivity.unknown.isOffline)
    }
}

@Suite struct JSONLinesTests {
    struct Sample: Encodable {
        var zeta = 1
        var alpha = "a/b"
        var at = Date(timeIntervalSince1970: 1_790_000_000)
    }

    @Test func oneSortedCompactLine() throws {
        #expect(try JSONLines.line(Sample()) == #"{"alpha":"a/b","at":"2026-09-21T14:13:20Z","zeta":1}"#)
    }

    @Test func rfc3339RoundTrips() {
        let whole = Date(timeIntervalSince1970: 1_790_000_000)
        #expect(RFC3339.string(from: whole) == "2026-09-21T14:13:20Z")
        let millis = Date(timeIntervalSince1970: 1_790_000_000.25)
        #expect(RFC3339.string(from: millis) == "2026-09-21T14:13:20.250Z")
        #expect(RFC3339.date(from: "2026-09-21T14:13:20Z") == whole)
        #expect(RFC3339.date(from: "2026-09-21T14:13:20.250Z") == millis)
        #expect(RFC3339.date(from: "yesterday") == nil)
    }
}

/// One list of the codes a tool prints: each error of the tools' own takes its exit status from
/// its code, and raxx(7) lists every code with that status and its meaning, as `Scripts/gen-man`
/// renders them from ErrorCode.swift.
@Suite struct ErrorCodeTests {
    @Test func anErrorTakesItsStatusFromItsCode() {
        for code in ErrorCode.allCases where code.status != .interrupted {
            let error = RaxxError(code: code, message: "m")
            #expect(error.code == code.rawValue && error.status == code.status && error.is(code), "\(code)")
        }
        let stopped = RaxxError(code: .stopped, message: "m", stoppedBy: .terminated)
        #expect(stopped.status == .terminated && stopped.is(.stopped))
        // A code the server answered with passes through as it came.
        let served = RaxxError(server: "some_new_problem", message: "m", status: .notPermitted)
        #expect(served.code == "some_new_problem" && served.status == .notPermitted)
    }

    @Test func raxx7ListsEveryCodeWithItsExitStatusAndMeaning() throws {
        let page = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/man/raxx.7", encoding: .utf8)
        let section = try #require(page.components(separatedBy: ".SH ERROR CODES\n").dropFirst().first?.components(separatedBy: ".SH ").first)
        let rows = section.components(separatedBy: "T}\n").filter { $0.contains("|T{\n.na\n") }
        #expect(rows.count == ErrorCode.allCases.count)
        for code in ErrorCode.allCases {
            #expect(code.meaning.allSatisfy { $0.isASCII && $0 != "|" && $0 != "\\" }, "\(code)")
            #expect(section.contains("\n\(code.rawValue)|\(code.status.rawValue)|T{\n.na\n\(code.meaning)\nT}\n"), "\(code)")
        }
    }
}

import Foundation
import HTTPTypes
import RaxxAPI
import RaxxTestSupport
import Testing

@testable import RaxxSandbox

/// One request must never stop the sandbox: every integer and array the spec bounds, in every
/// operation, tried as an attacker would (signed in, as staff, so each request reaches its
/// handler) against a real `raxx-sandbox serve`, which a trap would kill.
@Suite(.serialized, .blocking) struct SpecBoundsEndToEndTests {
    /// One bound of the spec, as `Scripts/gen-bounds --json` reads it from Spec/openapi.yaml.
    struct SpecBound: Decodable {
        var operation: String
        var method: String
        var path: String
        var place: String
        var field: [String]
        var kind: String
        var minimum: Int64
        var maximum: Int64
        /// The operation's required query parameters (each sent, so that only the bound can fail).
        var required_query: [String]
        /// A valid item of an array.
        var item: String
    }

    static let root = #filePath.components(separatedBy: "/Tests/")[0]

    static func specBounds() throws -> [SpecBound] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root + "/Scripts/gen-bounds", "--json"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode([SpecBound].self, from: data)
    }

    /// A signed-in staff member's token on a sandbox database at `path`.
    static func staffToken(database path: String) async throws -> String {
        let database = try SandboxDatabase(path: path)
        let grant = try await signedInGrant(database, email: "staff@example.com")
        #expect(try database.setStaff(email: "staff@example.com", staff: true, actor: "test"))
        return grant.accessToken
    }

    /// `body`'s JSON with `value` (JSON text) at `field`'s path.
    static func body(_ field: [String], _ value: String) -> String {
        field.reversed().reduce(value) { inner, key in key == "[]" ? "[\(inner)]" : #"{"\#(key)":\#(inner)}"# }
    }

    /// How a problem names the value at `field`: "[]" is the array's first element (`orders[0].qty`).
    static func displayName(_ field: [String]) -> String {
        field.reduce("") { name, key in key == "[]" ? name + "[0]" : (name.isEmpty ? key : name + "." + key) }
    }

    @Test func everyBoundedValueIsRefusedWithA400AndTheServerLivesOn() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-bounds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("sandbox.sqlite").path
        let token = try await Self.staffToken(database: path)
        let sandbox = try SandboxProcess(database: path)
        defer { sandbox.stop() }
        let url = try #require(URL(string: sandbox.url))
        let headers = ["Authorization": "Bearer \(token)"]

        let bounds = try Self.specBounds()
        #expect(bounds.count >= 18, "the spec's bounds were not read")
        #expect(Set(bounds.map(\.operation)).isSuperset(of: ["listAuditEvents", "listSubjectAuditEvents", "listOrders", "placeOrder", "checkOrders"]))
        #expect(bounds.contains { $0.field == ["orders", "[]", "qty"] }, "a bound inside an array's elements")
        var tried = 0
        for bound in bounds {
            let method = try #require(HTTPRequest.Method(bound.method))
            // Path parameters get a value of their own; the bound is what is tried.
            let route = bound.path.replacingOccurrences(of: #"\{[^}]+\}"#, with: "x", options: .regularExpression)
            let name = bound.field.joined(separator: ".")
            let required = bound.required_query.filter { $0 != name }.map { "\($0)=subject%40example.com&" }.joined()
            var cases: [(value: String, inRange: Bool)] = []
            if bound.kind == "integer" {
                for text in ["-1", "0", "2147483648", "9223372036854775807", "18446744073709551616", "abc"] {
                    let number = Int64(text)
                    cases.append((text, number.map { $0 >= bound.minimum && $0 <= bound.maximum } ?? false))
                }
            } else {
                // An array one longer than its bound, and one at it.
                for count in [bound.maximum + 1, bound.maximum] {
                    cases.append(("\(count)", count >= bound.minimum && count <= bound.maximum))
                }
            }
            for (value, inRange) in cases {
                let (target, payload): (String, String?)
                switch (bound.place, bound.kind) {
                case ("query", "integer"):
                    (target, payload) = (route + "?" + required + "\(name)=\(value)", nil)
                case ("query", _):
                    let items = Array(repeating: "\(name)=\(bound.item)", count: Int(value)!).joined(separator: "&")
                    (target, payload) = (route + "?" + required + items, nil)
                case (_, "integer"):
                    (target, payload) = (route, Self.body(bound.field, value == "abc" ? #""abc""# : value))
                default:
                    let items = Array(repeating: "\"\(bound.item)\"", count: Int(value)!).joined(separator: ",")
                    (target, payload) = (route, Self.body(bound.field, "[\(items)]"))
                }
                let (response, text) = try await httpCall(url, method, target, headers: headers, body: payload)
                let label = "\(bound.operation) \(name)=\(value)"
                #expect(response.status.code < 500, "\(label): \(response.status.code) \(text)")
                let namesIt = response.status.code == 400 && text.contains("'\(Self.displayName(bound.field))'")
                if inRange {
                    #expect(!namesIt, "\(label) is within the spec's bounds: \(text)")
                } else {
                    #expect(namesIt, "\(label): \(response.status.code) \(text)")
                    #expect(response.headerFields[.contentType] == "application/problem+json", "\(label)")
                }
                let health = try await httpCall(url, .get, "/api/health")
                #expect(health.0.status.code == 200, "the sandbox stopped answering after \(label)")
                #expect(sandbox.isRunning, "the sandbox died on \(label)")
                tried += 1
            }
        }
        #expect(tried > 80)
    }
}

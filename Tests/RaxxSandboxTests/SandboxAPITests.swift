import Foundation
import HTTPTypes
import OpenAPIRuntime
import RaxxAPI
import RaxxClient
import RaxxCore
import RaxxSandboxTestSupport
import RaxxTestSupport
import Testing

@testable import RaxxSandbox

/// The sandbox through the generated client.
@Suite struct SandboxAPITests {
    @Test func healthAnswersWithVersionAndTime() async throws {
        try await withSandbox { url in
            let health = try await generatedClient(url).getHealth().ok.body.json
            #expect(health.status == .ok)
            #expect(health.version == RaxxVersion.current)
            #expect(abs(health.time.timeIntervalSinceNow) < 60)
        }
    }

    @Test func theAuditTrailIsTheCallersOwn() async throws {
        let database = try SandboxDatabase(path: ":memory:")
        let grant = try await signedInGrant(database, email: "t@example.com")
        _ = try await signedInGrant(database, email: "other@example.com")
        try await withSandbox(database: database) { url in
            let page = try await generatedClient(url, middlewares: [BearerToken(grant.accessToken)]).listAuditEvents().ok.body.json
            #expect(!page.events.isEmpty)
            #expect(page.events.allSatisfy { $0.subject == page.events[0].subject || $0.subject == grant.account.id })
            #expect(page.events.contains { $0.action == "session.started" })
            #expect(page.cursor == page.events.last?.seq)
        }
    }

    @Test func protectedPathsNeedABearerToken() async throws {
        try await withSandbox { url in
            let client = try generatedClient(url)
            let outputs: [(Int, String)] = [
                try await client.getPortfolio().problem,
                try await client.getSyncChanges(query: .init(cursor: 0)).problem,
                try await client.listOrders().problem,
                try await client.listEvents().problem,
                try await client.listAuditEvents().problem,
            ]
            for (status, code) in outputs {
                #expect(status == 401)
                #expect(code == "unauthorized")
            }
        }
    }

    @Test func anUnknownTokenIsUnauthorized() async throws {
        try await withSandbox { url in
            let (response, body) = try await raw(url, .get, "/api/portfolio", headers: ["Authorization": "Bearer nope"])
            #expect(response.status.code == 401)
            #expect(response.headerFields[.contentType] == "application/problem+json")
            #expect(body.contains(#""code":"unauthorized""#))
        }
    }

    @Test func badInputIsA4xxProblemNamingTheField() async throws {
        try await withSandbox { url in
            let missing = try await raw(url, .post, "/api/auth/register/options", body: #"{"name":"x"}"#)
            #expect(missing.0.status.code == 400)
            #expect(missing.1.contains("Missing field 'email'"))
            let malformed = try await raw(url, .post, "/api/auth/login/options", body: "{not json")
            #expect(malformed.0.status.code == 400)
            #expect(malformed.1.contains(#""code":"bad_request""#))
            let unknown = try await raw(url, .get, "/api/nowhere")
            #expect(unknown.0.status.code == 404)
            #expect(unknown.1.contains(#""code":"not_found""#))
        }
    }

    func raw(_ url: URL, _ method: HTTPRequest.Method, _ path: String, headers: [String: String] = [:], body: String? = nil)
        async throws -> (HTTPResponse, String)
    {
        var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
        for (k, v) in headers { request.headerFields[HTTPField.Name(k)!] = v }
        if body != nil { request.headerFields[.contentType] = "application/json" }
        let transport = CurlTransport(options: .init(userAgent: "raxx-test"))
        let (response, responseBody) = try await transport.send(request, body: body.map { HTTPBody($0) }, baseURL: url, operationID: "raw")
        var text = ""
        if let responseBody { text = try await String(collecting: responseBody, upTo: 1 << 20) }
        return (response, text)
    }
}

/// Reads the status and problem code of any operation's `default` answer.
protocol ProblemOutput {
    var problemAnswer: (Int, Components.Responses.Problem)? { get }
}

extension ProblemOutput {
    var problem: (Int, String) {
        get throws {
            guard let (status, problem) = problemAnswer else { return (200, "") }
            return (status, try problem.body.applicationProblemJson.code)
        }
    }
}

extension Operations.GetPortfolio.Output: ProblemOutput {
    var problemAnswer: (Int, Components.Responses.Problem)? { if case .default(let s, let p) = self { (s, p) } else { nil } }
}
extension Operations.GetSyncChanges.Output: ProblemOutput {
    var problemAnswer: (Int, Components.Responses.Problem)? { if case .default(let s, let p) = self { (s, p) } else { nil } }
}
extension Operations.ListOrders.Output: ProblemOutput {
    var problemAnswer: (Int, Components.Responses.Problem)? { if case .default(let s, let p) = self { (s, p) } else { nil } }
}
extension Operations.ListEvents.Output: ProblemOutput {
    var problemAnswer: (Int, Components.Responses.Problem)? { if case .default(let s, let p) = self { (s, p) } else { nil } }
}
extension Operations.ListAuditEvents.Output: ProblemOutput {
    var problemAnswer: (Int, Components.Responses.Problem)? { if case .default(let s, let p) = self { (s, p) } else { nil } }
}

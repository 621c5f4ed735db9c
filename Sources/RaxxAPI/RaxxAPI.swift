// The Raptor API model. Types, Client and APIProtocol are generated at build time from
// Spec/openapi.yaml (symlinked here) by the swift-openapi-generator build plugin: change the spec,
// never the generated code. The only hand-written code here is the wire configuration that the
// client and the sandbox server share.
import OpenAPIRuntime
import Foundation
import RaxxCore

/// RFC 3339 dates on the wire: written in UTC with milliseconds only when there are some, read
/// with or without fractional seconds.
public struct RFC3339DateTranscoder: DateTranscoder {
    public init() {}

    public func encode(_ date: Date) throws -> String { RFC3339.string(from: date) }

    public func decode(_ text: String) throws -> Date {
        guard let date = RFC3339.date(from: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Not an RFC 3339 date: \(text)"))
        }
        return date
    }
}

extension Configuration {
    /// The configuration both ends of Raptor use.
    public static var raxx: Configuration { Configuration(dateTranscoder: RFC3339DateTranscoder()) }

    /// The client's: request bodies compact (keys still sorted), as a person's curl sends them,
    /// rather than indented for reading.
    public static var raxxClient: Configuration {
        Configuration(dateTranscoder: RFC3339DateTranscoder(), jsonEncodingOptions: [.sortedKeys])
    }
}

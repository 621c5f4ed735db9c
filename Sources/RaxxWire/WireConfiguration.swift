import Foundation
// The wire configuration the client and the sandbox server share: dates, and the decoder the
// fast readers fall back to.
import OpenAPIRuntime
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

/// The generated types read from JSON as the generated client reads them (JSONDecoder, dates by
/// the shared transcoder): for what the fast readers leave alone, and for tests holding a writer
/// to the model.
public enum WireJSON {
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        let transcoder = RFC3339DateTranscoder()
        decoder.dateDecodingStrategy = .custom { d in try transcoder.decode(try d.singleValueContainer().decode(String.self)) }
        return decoder
    }

    /// `bytes` read by a fast reader (`OrderAnswerReader`, `PortfolioAnswerReader`), or, for
    /// what it does not take, by the generated types, which accept or refuse it as the generated
    /// client does.
    static func read<T: Decodable>(_ bytes: [UInt8], fast: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        try bytes.withUnsafeBytes { buffer in
            if let value = try? fast(buffer) { return value }
            return try decoder().decode(T.self, from: Data(buffer))
        }
    }
}

import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxDSR
import RaxxHTTP

extension RaxxDSR {
    /// `raxx-dsr export ID --out FILE`.
    public struct Export: DSRVerb {
        public static let configuration = CommandConfiguration(
            abstract: "Export everything held about the subject of a verified access request (Art. 15, 20).",
            discussion: """
            One JSON document: each table holding the subject's personal data (account, passkeys' \
            public metadata, sessions, devices, orders, fills, positions, alerts, audit events, \
            data-subject requests) with a manifest of each table's rows and SHA-256. The manifest is \
            checked before anything is written. --out creates the file with mode 0600 and never \
            writes over an existing one; without --out the document goes to stdout, which is \
            refused on a terminal. The access request becomes completed. 
            """ + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The access request's id.", valueName: "id"))
        var id: String
        @Option(help: ArgumentHelp("The file to create (mode 0600; never written over).", valueName: "file"))
        var out: String?
        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var request_id: String
            var out: String
            var tables: Int
            var rows: Int64
        }

        public func run(_ context: CommandContext) async throws {
            if out == nil || out == "-", context.io.stdoutIsTTY {
                throw RaxxError.usage("Refusing to write an export to a terminal.", hint: "Use --out FILE, or a pipe.")
            }
            let files: any DSRFiles = try context.service()
            _ = try context.storedSession()
            let export = try await context.signedInAPI().exportDSRData(path: .init(requestId: id)).checked().ok.body.json
            let bytes = try ExportDocument.bytes(export)
            let rows = export.manifest.tables.reduce(0) { $0 + $1.rows }
            if let out, out != "-" {
                try files.writeNew(path: out, data: bytes)
                try context.emit([Record(request_id: id, out: out, tables: export.manifest.tables.count, rows: rows)],
                                 columns: [.init("Request"), .init("File"), .init("Tables", .right), .init("Rows", .right)]) {
                    [$0.request_id, $0.out, "\($0.tables)", "\($0.rows)"]
                }
            } else {
                bytes.withUnsafeBytes { context.io.stdout.write(bytes: $0) }
                context.io.stdout.flush()
                context.say("Exported \(rows) rows from \(export.manifest.tables.count) tables.")
            }
        }
    }
}

import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDSR

extension RaxxDSR {
    /// `raxx-dsr export ID --out FILE`.
    public struct Export: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Export everything held about the subject of a verified access request (Art. 15, 20).",
            discussion: """
                One JSON document: each table holding the subject's personal data (account, passkeys' \
                public metadata, sessions, devices, orders, fills, positions, alerts, audit events, \
                data-subject requests) with a manifest of each table's rows and SHA-256. The manifest is \
                checked before anything is written. --out creates the file with mode 0600 and never \
                writes over an existing one; without --out the document goes to stdout, which is \
                refused on a terminal. With --encrypt-to age1… (an X25519 recipient, as age-keygen \
                prints it; repeatable), --passphrase (asked on the terminal, twice, not shown) or \
                --passphrase-fd N, it is written in the age format, which the \
                requester opens with the standard age tool (age -d). The access request becomes \
                completed. 
                """ + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The access request's id.", valueName: "id"))
        var id: String
        @Option(help: ArgumentHelp("The file to create (mode 0600; never written over).", valueName: "file"))
        var out: String?
        @Option(name: .customLong("encrypt-to"), help: ArgumentHelp("Encrypt to this age recipient (age1…); repeatable.", valueName: "recipient"))
        var encryptTo: [String] = []
        @Option(
            name: .customLong("passphrase-fd"),
            help: ArgumentHelp(
                """
                Encrypt with the passphrase (at least \(ExportEncryption.minimumPassphraseCharacters) characters) read from this open \
                file descriptor (age's scrypt).
                """,
                valueName: "n"))
        var passphraseFD: Int32?
        @Flag(
            name: .customLong("passphrase"),
            help:
                """
                Encrypt with a passphrase (at least \(ExportEncryption.minimumPassphraseCharacters) characters) asked on the terminal, \
                twice, not shown (age's scrypt).
                """
        )
        var askPassphrase = false
        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var request_id: String
            var out: String
            var tables: Int
            var rows: Int64
            var encryption: String
        }

        public func validate() throws {
            let kinds = [!encryptTo.isEmpty ? "--encrypt-to" : nil, askPassphrase ? "--passphrase" : nil, passphraseFD != nil ? "--passphrase-fd" : nil]
                .compactMap { $0 }
            if kinds.count > 1 { throw ValidationError("Give one of --encrypt-to, --passphrase and --passphrase-fd, not \(kinds.joined(separator: " and ")).") }
            if let fd = passphraseFD, fd < 0 { throw ValidationError("--passphrase-fd takes a file descriptor number (0 or more).") }
        }

        public func run(_ context: CommandContext) async throws {
            if out == nil || out == "-", context.io.stdoutIsTTY {
                throw RaxxError.usage("Refusing to write an export to a terminal.", hint: "Use --out FILE, or a pipe.")
            }
            let files: any DSRFiles = try context.service()
            // Everything a person typed is checked, and the passphrase read, before anything is sent.
            let encryption: ExportEncryption =
                if let fd = passphraseFD {
                    try ExportEncryption.checkedPassphrase(try files.passphrase(fd: fd))
                } else if askPassphrase {
                    try ExportEncryption.checkedPassphrase(
                        try files.askPassphrase(
                            prompt:
                                """
                                Passphrase for the export (at least \(ExportEncryption.minimumPassphraseCharacters) characters; the requester \
                                opens it with age -d): 
                                """
                        ))
                } else if !encryptTo.isEmpty {
                    try ExportEncryption.recipients(encryptTo)
                } else {
                    .none
                }
            let how =
                switch encryption {
                case .none: "none";
                case .recipients: "age-x25519";
                case .passphrase: "age-scrypt"
                }
            let api = try context.signedInAPI()
            // A large account's export takes a while to gather: a terminal shows the time spent.
            let export = try await context.progressLine("exporting \(id)").whileWaiting {
                try await api.exportDSRData(path: .init(requestId: id))
            }.checked().ok.body.json
            let bytes = try encryption.seal(try ExportDocument.bytes(export))
            let rows = export.manifest.tables.reduce(0) { $0 + $1.rows }
            // The request completes only once the copy is written and synced (or flushed): a write
            // that fails leaves it verified, to export again.
            if let out, out != "-" {
                do {
                    try files.writeNew(path: out, data: bytes)
                } catch {
                    var told = error
                    told.hint = [error.hint, "\(id) is not completed: export it again."].compactMap { $0 }.joined(separator: " ")
                    throw told
                }
                _ = try await api.confirmDSRExport(path: .init(requestId: id)).checked().ok
                try context.emit(
                    [Record(request_id: id, out: out, tables: export.manifest.tables.count, rows: rows, encryption: how)],
                    columns: [.init("Request"), .init("File"), .init("Tables", .right), .init("Rows", .right), .init("Encryption")]
                ) {
                    [$0.request_id, $0.out, "\($0.tables)", "\($0.rows)", $0.encryption]
                }
            } else {
                bytes.withUnsafeBytes { context.io.stdout.write(bytes: $0) }
                context.io.stdout.flush()
                _ = try await api.confirmDSRExport(path: .init(requestId: id)).checked().ok
                context.say("Exported \(rows) rows from \(export.manifest.tables.count) tables; \(id) is completed.")
            }
        }
    }
}

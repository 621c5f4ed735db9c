import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDSR
import RaxxWire

extension RaxxDSR {
    /// `raxx-dsr receipt ID`.
    public struct Receipt: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "receipt",
            abstract: "Print the signed receipt of a completed erasure.",
            discussion: """
                The receipt (request id, a keyed hash of the subject, the plan hash, per-table actions and \
                counts, completed_at) is signed by the server with Ed25519 over its canonical JSON. The \
                server's receipt key is fetched and kept at first use (per server, beside the keystore); \
                the receipt is verified against the kept key before it is printed, and a server whose key \
                changed is refused. Save it (raxx-dsr receipt ID > receipt.json) and check it later, \
                offline, with verify-receipt. 
                """ + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The erasure request's id.", valueName: "id"))
        var id: String
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let files: any DSRFiles = try context.service()
            let api = try context.signedInAPI()
            let receipt = try await api.getDSRReceipt(path: .init(requestId: id)).checked().ok.body.json
            var key = try files.keptReceiptKey(origin: context.origin)
            if key == nil {
                let served = try await api.getDSRReceiptKey().checked().ok.body.json
                let kept = try Receipts.keep(served, origin: context.origin, now: context.clock())
                try files.keep(kept)
                context.say("Kept \(context.origin)'s receipt key \(kept.key_id).")
                key = kept
            }
            guard let key, Receipts.verifies(receipt, key: key) else {
                throw RaxxError(
                    code: .receiptInvalid, message: "The receipt does not verify against \(context.origin)'s kept receipt key.",
                    hint: "The server's key may have changed; nothing was printed.")
            }
            context.io.stdout.write(try JSONLines.line(receipt) + "\n")
            context.io.stdout.flush()
        }
    }

    /// `raxx-dsr verify-receipt FILE`.
    public struct VerifyReceipt: DSRVerb {
        public static let connectivity = ConnectivityRequirement.offlineCapable
        public static let configuration = CommandConfiguration(
            commandName: "verify-receipt",
            abstract: "Check a saved receipt's signature, offline, against the server's kept receipt key.",
            discussion: """
                Exits 0 when the signature verifies, 1 when it does not (a byte changed, or another key \
                signed it), 65 when the file is not a receipt. The key is the one raxx-dsr receipt kept \
                for the configured server (RAXX_API_URL). 
                """ + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The receipt file (what raxx-dsr receipt printed).", valueName: "file"))
        var file: String
        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var file: String
            var valid: Bool
            var request_id: String
            var key_id: String
            var completed_at: String
        }

        public func run(_ context: CommandContext) async throws {
            let files: any DSRFiles = try context.service()
            let receipt = try Receipts.parse(try files.read(path: file, limit: Receipts.maxFileBytes))
            guard let key = try files.keptReceiptKey(origin: context.origin) else {
                throw RaxxError(
                    code: .noReceiptKey, message: "No receipt key is kept for \(context.origin).",
                    hint: "raxx-dsr receipt ID fetches and keeps it (once, online).")
            }
            guard Receipts.verifies(receipt, key: key) else {
                throw RaxxError(
                    code: .receiptInvalid, message: "The receipt's signature does not verify: it was changed, or \(context.origin)'s key did not sign it.")
            }
            try context.emit(
                [
                    Record(
                        file: file, valid: true, request_id: receipt.receipt.requestId, key_id: key.key_id,
                        completed_at: receipt.receipt.completedAt)
                ],
                columns: [.init("File"), .init("Valid"), .init("Request"), .init("Key"), .init("Completed")]
            ) {
                [$0.file, "yes", $0.request_id, $0.key_id, $0.completed_at]
            }
        }
    }

    /// `raxx-dsr audit --email E`.
    public struct Audit: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "audit",
            abstract: "Print a data subject's audit trail, oldest first.",
            discussion: """
                Every audit event by or about the subject's account: sign-ins, renewals refused, step-ups, \
                device changes, order state changes, and staff actions on their requests. JSON Lines (a \
                table on a terminal), fetched page by page; --cursor continues after an event's seq. 
                """ + connectivity.helpLine
        )

        @Option(help: ArgumentHelp("The data subject's email address.", valueName: "email"))
        var email: String
        @Option(help: ArgumentHelp("Start after this event (its seq).", valueName: "seq"))
        var cursor: Int64 = 0
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let email = try DSRRequests.email(email)
            let api = try context.signedInAPI()
            let printed = try await AuditPages.print(in: context, from: cursor) { cursor in
                try await api.listSubjectAuditEvents(query: .init(email: email, cursor: cursor, limit: 500)).checked().ok.body.json
            }
            if printed == 0 && cursor == 0 {
                // Nothing at all: say why it may be, rather than leave an empty answer to be misread.
                context.say(
                    "No audit events for \(email): no account has that email, or its account was erased "
                        + "(an erased subject's events are kept under a pseudonym, not the email).")
            }
        }
    }
}

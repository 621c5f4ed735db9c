import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDSR
import RaxxDomain
import RaxxWire

extension RaxxDSR {
    /// `raxx-dsr open`: record a request as it was received.
    public struct Open: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "open",
            abstract: "Record a data-subject request (access or erasure).",
            discussion: """
                The request starts as identity_unverified. It is due one month from receipt, on the same \
                day of the month, or on the month's last day when that day does not exist (received 31 \
                January: due the last day of February). --received-at takes a day (2026-01-31) or an RFC \
                3339 time; default now. A malformed email or date exits 65 and records nothing. A staff \
                member's own request is refused (77): another staff member opens it and takes each of its steps. 
                """ + connectivity.helpLine
        )

        @Option(help: ArgumentHelp("The data subject's email address.", valueName: "email"))
        var email: String
        @Option(help: ArgumentHelp("What the subject asks for: access (a copy of their data) or erasure.", valueName: "kind"))
        var kind: Components.Schemas.DSRKind
        @Option(help: ArgumentHelp("The support ticket the request arrived on.", valueName: "ticket"))
        var ticket: String
        @Option(name: .customLong("received-at"), help: ArgumentHelp("When the request was received (default: now).", valueName: "date"))
        var receivedAt: String?
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let email = try DSRRequests.email(email)
            let ticket = try DSRRequests.text(ticket, field: "ticket", max: DSRText.ticketLength)
            let received = try receivedAt.map { text throws(RaxxError) in try DSRRequests.receivedAt(text, now: context.clock()) }
            let body = Components.Schemas.DSRRequestOpening(email: email, kind: kind, ticket: ticket, receivedAt: received)
            let request = try await context.signedInAPI().createDSRRequest(body: .json(body)).checked().created.body.json
            try RequestOutput.emit([request], in: context)
        }
    }

    /// `raxx-dsr verify-identity ID --method TEXT`.
    public struct VerifyIdentity: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "verify-identity",
            abstract: "Record that the requester's identity was verified, and how.",
            discussion: "You are recorded as the verifier. Only an identity_unverified request can be verified. " + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The request's id.", valueName: "id"))
        var id: String
        @Option(help: ArgumentHelp("How the identity was verified (e.g. a reply from the account's email).", valueName: "text"))
        var method: String
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let method = try DSRRequests.text(method, field: "method")
            let request = try await context.signedInAPI().verifyDSRIdentity(path: .init(requestId: id), body: .json(.init(method: method)))
                .checked().ok.body.json
            try RequestOutput.emit([request], in: context)
        }
    }

    /// `raxx-dsr extend ID --reason TEXT`.
    public struct Extend: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "extend",
            abstract: "Extend a request's due date by two months, once, within its first month.",
            discussion: """
                GDPR Art. 12(3) allows two further months for complex or numerous requests; the requester \
                must be told why within the first month, so the reason is required. A second extension, \
                or one after the first month, is refused (exit 1) and changes nothing. 
                """ + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The request's id.", valueName: "id"))
        var id: String
        @Option(help: ArgumentHelp("Why the request needs more time (the requester is told).", valueName: "text"))
        var reason: String
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let reason = try DSRRequests.text(reason, field: "reason")
            let request = try await context.signedInAPI().extendDSRRequest(path: .init(requestId: id), body: .json(.init(reason: reason)))
                .checked().ok.body.json
            try RequestOutput.emit([request], in: context)
        }
    }

    /// `raxx-dsr list`.
    public struct List: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List data-subject requests, soonest due first.",
            discussion: """
                --due-within 7d keeps the open requests due within seven days (overdue ones included); \
                --overdue keeps the overdue ones and exits 1 when there are any, so that cron mails them: \
                0 8 * * * raxx-dsr list --overdue --format text 
                """ + connectivity.helpLine
        )

        @Option(help: ArgumentHelp("Only requests in this state.", valueName: "status"))
        var status: Components.Schemas.DSRStatus?
        @Option(name: .customLong("due-within"), help: ArgumentHelp("Only open requests due within this long (e.g. 7d).", valueName: "duration"))
        var dueWithin: RaxxDuration?
        @Flag(help: "Only overdue requests; exit 1 when there are any.")
        var overdue = false
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            var requests = try await context.signedInAPI().listDSRRequests(query: .init(status: status)).checked().ok.body.json.requests
            let today = CalendarDay(context.clock())
            if let dueWithin {
                let days = Int((dueWithin.seconds / 86_400).rounded(.up))
                requests = requests.filter { DSRRequests.isDue($0, within: days, today: today) }
            }
            if overdue { requests = requests.filter(\.overdue) }
            try RequestOutput.emit(requests, in: context)
            if overdue, !requests.isEmpty {
                throw RaxxError(code: .overdue, message: "\(requests.count) data-subject request\(requests.count == 1 ? " is" : "s are") overdue.")
            }
        }
    }

    /// `raxx-dsr show ID`.
    public struct Show: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one data-subject request with its history's landmarks.",
            discussion: connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The request's id.", valueName: "id"))
        var id: String
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let r = try await context.signedInAPI().getDSRRequest(path: .init(requestId: id)).checked().ok.body.json
            guard context.format == .text else { return try RequestOutput.emit([r], in: context) }
            let rows = [
                ["id", r.id], ["kind", r.kind.rawValue], ["status", r.status.rawValue], ["subject", r.subject], ["ticket", r.ticket],
                ["received_at", context.peopleTime(r.receivedAt)], ["due_on", r.dueOn + (r.overdue ? " (overdue)" : "")],
                ["extended", r.extended ? "yes: " + (r.extensionReason ?? "") : "no"], ["opened_by", r.openedBy],
                ["verified_by", r.verifiedBy.map { "\($0): \(r.verificationMethod ?? "")" } ?? "-"],
                ["plan_hash", r.planHash ?? "-"], ["closed_reason", r.closedReason ?? "-"],
                ["completed_at", r.completedAt.map(context.peopleTime) ?? "-"],
            ]
            context.writeRecord(rows.map { ($0[0], $0[1]) })
        }
    }

    /// What cancel and refuse share.
    static func close(_ id: String, to status: Components.Schemas.DSRClosing.StatusPayload, reason: String, context: CommandContext) async throws {
        let reason = try DSRRequests.text(reason, field: "reason")
        let request = try await context.signedInAPI().closeDSRRequest(path: .init(requestId: id), body: .json(.init(status: status, reason: reason)))
            .checked().ok.body.json
        try RequestOutput.emit([request], in: context)
    }

    /// `raxx-dsr cancel ID --reason TEXT`.
    public struct Cancel: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "cancel",
            abstract: "Cancel a request that is not completed (the requester withdrew it), with a reason.",
            discussion: connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The request's id.", valueName: "id"))
        var id: String
        @Option(help: ArgumentHelp("Why it is cancelled.", valueName: "text"))
        var reason: String
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws { try await RaxxDSR.close(id, to: .cancelled, reason: reason, context: context) }
    }

    /// `raxx-dsr refuse ID --reason TEXT`.
    public struct Refuse: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "refuse",
            abstract: "Refuse a request that is not completed (manifestly unfounded or excessive, Art. 12(5)), with a reason.",
            discussion: connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The request's id.", valueName: "id"))
        var id: String
        @Option(help: ArgumentHelp("Why it is refused (the requester is told).", valueName: "text"))
        var reason: String
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws { try await RaxxDSR.close(id, to: .refused, reason: reason, context: context) }
    }
}

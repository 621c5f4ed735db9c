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
    /// `raxx-dsr plan ID`.
    public struct Plan: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "plan",
            abstract: "Show what erasing the subject of a verified erasure request would do, per table.",
            discussion: """
                Per table: the rows affected, the action (delete, pseudonymise or retain), its legal ground \
                and how long retained rows are kept; with the plan_hash over the plan and the data it was \
                computed from, which apply needs. A table on a terminal (the hash last), one JSON object \
                otherwise. The request becomes planned. 
                """ + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The erasure request's id.", valueName: "id"))
        var id: String
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let plan = try await context.signedInAPI().planDSRErasure(path: .init(requestId: id)).checked().ok.body.json
            switch context.format {
            case .json:
                context.io.stdout.write(try JSONLines.line(plan) + "\n")
            case .text:
                // On a narrow terminal the legal ground and the description go first (raxx.7 has them).
                let table = Table(
                    columns: [
                        .init("Table", importance: 10), .init("Rows", .right, importance: 9), .init("Action", importance: 8),
                        .init("Retention", importance: 7), .init("Ground", importance: 5, elidable: true),
                        .init("What", importance: 4, elidable: true),
                    ],
                    rows: plan.items.map { [$0.table, "\($0.rows)", $0.action.rawValue, $0.retention, $0.ground, $0.what] })
                let width = context.io.stdoutIsTTY ? context.io.terminalColumns : nil
                context.io.stdout.write(table.render(width: width) + "plan_hash \(TerminalText.printable(plan.planHash))\n")
            }
            context.io.stdout.flush()
            context.say("Apply it with: raxx-dsr apply \(id) --plan-hash \(plan.planHash)")
        }
    }

    /// `raxx-dsr apply ID --plan-hash H`.
    public struct Apply: DSRVerb {
        public static let configuration = CommandConfiguration(
            commandName: "apply",
            abstract: "Carry out an erasure plan, once, after a passkey step-up bound to the plan.",
            discussion: """
                Before anything is asked, the plan is checked with the server: a hash that is not the \
                request's plan is refused (65, "not this plan's hash"), and a plan whose data changed since \
                (an order filled) with exit 75, "The plan is stale", naming the request to plan again. On a \
                terminal you then confirm by typing the subject's email; in scripts --confirm EMAIL says it \
                (there is no --yes). Your passkey then confirms this very plan (asks for the PIN, or \
                --pin-fd). The subject's access and identifiers go first, then the history in chunks; if it \
                is interrupted (Ctrl-C, a lost connection), it says what state the request is in, and \
                applying again with the same plan hash finishes it. Applying a completed request changes \
                nothing and says so. 
                """ + connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The erasure request's id.", valueName: "id"))
        var id: String
        @Option(name: .customLong("plan-hash"), help: ArgumentHelp("The plan_hash raxx-dsr plan showed.", valueName: "hash"))
        var planHash: String
        @Option(help: ArgumentHelp("The subject's email, confirming the erasure without a terminal.", valueName: "email"))
        var confirm: String?
        @OptionGroup var pin: PINOptions
        @OptionGroup public var global: GlobalOptions

        public init() {}

        /// How long the apply call may take before the command gives up waiting (the erasure goes
        /// on on the server, and the same command run again resumes or reports it).
        static let timeout = RaxxDuration.seconds(3600)

        /// A plan whose data changed since it was made.
        static func stale(_ id: String) -> RaxxError {
            RaxxError(
                code: .planStale, message: "The plan is stale: \(id)'s data changed since it was planned (an order filled, say).",
                hint: "Plan again: raxx-dsr plan \(id); check the new plan, then apply its plan_hash.")
        }

        /// An apply stopped before it was sent (at the prompt, the PIN or the step-up): nothing
        /// more was erased, and the request is as it was.
        static func notStarted(_ id: String, status: Components.Schemas.DSRStatus, planHash: String) -> RaxxError {
            let state = status == .erasing ? "still erasing, stopped part-way where it was" : "still \(status.rawValue), its plan unchanged"
            return RaxxError(
                code: .cancelled, message: "Stopped before erasing anything: \(id) is \(state).",
                hint: "Apply again to finish it: raxx-dsr apply \(id) --plan-hash \(planHash)")
        }

        /// An apply that stopped before its answer came: what state the request is in, and how
        /// to finish it.
        static func interrupted(_ id: String, planHash: String, why: String, code: ErrorCode) -> RaxxError {
            RaxxError(
                code: code,
                message: "\(why). On the server the erasure goes on, or stopped part-way and waits: \(id) is erasing "
                    + "(raxx-dsr show \(id) says how far), and nothing is left half-erased for good.",
                hint: "Apply again to finish it: raxx-dsr apply \(id) --plan-hash \(planHash)")
        }

        struct Record: Encodable {
            var request_id: String
            var status: String
            var plan_hash: String
            var already_completed: Bool
            var completed_at: Date?
        }

        public func run(_ context: CommandContext) async throws {
            // A plan hash is hex SHA-256: anything else is a mistyped argument, not a stale plan.
            // (In either case: the server writes it in lowercase.)
            let planHash = self.planHash.lowercased()
            guard planHash.count == 64, planHash.utf8.allSatisfy(\.isASCIIHexDigit) else {
                throw RaxxError.usage("--plan-hash takes the 64 hex characters of the plan_hash raxx-dsr plan showed, not '\(self.planHash)'.")
            }
            let confirmed = try confirm.map { text throws(RaxxError) in try DSRRequests.email(text, field: "confirm") }
            if confirmed == nil, !context.io.stdinIsTTY {
                throw RaxxError.usage("Confirm the erasure with --confirm EMAIL (the subject's email) when not on a terminal.")
            }
            let api = try context.signedInAPI()
            let request = try await api.getDSRRequest(path: .init(requestId: id)).checked().ok.body.json
            var grant: String? = nil
            if request.status != .completed {
                guard let current = request.planHash, [.planned, .erasing].contains(request.status) else {
                    throw RaxxError(
                        code: .planRequired, message: "There is no plan to apply: \(id) is \(request.status.rawValue).",
                        hint: "Verify the identity, then: raxx-dsr plan \(id)")
                }
                guard current == planHash else {
                    throw RaxxError.badInput(
                        field: "plan-hash",
                        "is not this plan's hash: \(id)'s plan has another "
                            + "(check the plan_hash raxx-dsr plan \(id) showed; a plan made since replaces the one before)")
                }
                // Fresh: the plan as it would be made now has the same hash (not when the erasure is
                // part-way: applying again finishes it).
                if request.status == .planned {
                    let now = try await api.checkDSRErasurePlan(path: .init(requestId: id)).checked().ok.body.json
                    guard now.planHash == planHash else { throw Self.stale(id) }
                }
                // Ctrl-C at the prompt, at the PIN or during the step-up says where the request stands.
                let notYet = Self.notStarted(id, status: request.status, planHash: planHash)
                var askingOrSteppingUp: (any Sendable)? = context.endOnInterrupt(with: notYet)
                defer { withExtendedLifetime(askingOrSteppingUp) {} }
                let typed: String
                if let confirmed {
                    typed = confirmed
                } else {
                    context.io.stderr.write("Type the subject's email to erase their data: ")
                    context.io.stderr.flush()
                    guard let line = try context.io.stdin.readLine() else { throw notYet }
                    typed = line.trimmingCharacters(in: .whitespaces).lowercased()
                }
                guard typed == request.subject.lowercased() else {
                    throw confirmed == nil
                        ? RaxxError(code: .cancelled, message: "That is not the subject's email: nothing was erased.")
                        : RaxxError.badInput(field: "confirm", "is not the subject's email: nothing was erased")
                }
                grant = try await context.ceremonies().stepUp(
                    for: ErasureApplyAction(requestID: id, planHash: planHash),
                    pin: context.pinPrompt(pin.source)
                ).grant
                askingOrSteppingUp = nil  // from here, an interrupt stops the wait for the erasure (below)
            }
            // The answer comes when the last row is erased: a large account takes minutes, far past
            // an ordinary call's timeout (which would report a failure while the erasure goes on).
            // A terminal shows the time spent.
            let id = self.id, timeout = Self.timeout, grantGiven = grant
            let progress = context.progressLine("erasing \(id)")
            let applying = Task { [api] in
                try await RequestTimeout.$total.withValue(timeout) {
                    try await progress.whileWaiting {
                        try await api.applyDSRErasure(
                            path: .init(requestId: id), headers: .init(raxxStepUpGrant: grantGiven),
                            body: .json(.init(planHash: planHash)))
                    }
                }.checked().ok.body.json
            }
            let stop = StopRace<Components.Schemas.ErasureOutcome>()
            let interrupts = context.world.onInterrupt { stop.stop($0) }
            defer { withExtendedLifetime(interrupts) {} }
            let outcome: Components.Schemas.ErasureOutcome
            do {
                switch await stop.race(applying) {
                case .finished(let answer):
                    outcome = try answer.get()
                case .stopped:
                    applying.cancel()
                    throw Self.interrupted(id, planHash: planHash, why: "Stopped waiting for the erasure of \(id)", code: .applyInterrupted)
                }
            } catch let error where ErrorMapping.isOffline(error) {
                throw Self.interrupted(
                    id, planHash: planHash, why: "The connection was lost while \(id) was being erased",
                    code: .applyConnectionLost)
            } catch let error as RaxxError where error.code == Components.Schemas.ProblemCode.planStale.rawValue {
                throw Self.stale(id)
            }
            let r = outcome.request
            if outcome.alreadyCompleted { context.say("\(id) was completed already: nothing changed.") }
            try context.emit(
                [
                    Record(
                        request_id: r.id, status: r.status.rawValue, plan_hash: r.planHash ?? planHash,
                        already_completed: outcome.alreadyCompleted, completed_at: r.completedAt)
                ],
                columns: [.init("Request"), .init("Status"), .init("Completed"), .init("Note")]
            ) {
                [$0.request_id, $0.status, $0.completed_at.map(context.peopleTime) ?? "-", $0.already_completed ? "already completed" : "erased"]
            }
        }
    }
}

import ArgumentParser
import Foundation
import RaxxCore
import RaxxSandbox
import RaxxWire

extension RaxxSandboxTool {
    /// `raxx-sandbox erasure-rules`: the erasure rules, as the plan, the export and the receipt use
    /// them (and as raxx.7 prints them: Scripts/gen-man renders its table from this).
    public struct ErasureRules: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(
            commandName: "erasure-rules",
            abstract: "Print what an erasure does to each table holding personal data.",
            discussion: """
                One JSON line per rule, in the order an erasure runs them: the rule, the table, the action \
                (delete or pseudonymise), the legal ground, how long retained rows are kept, the phase \
                (identifiers, history, final) and what the rows are. Every erasure plan and receipt lists \
                the same tables in the same order. Then one line per table that can hold a link to a \
                person but has no rule of its own (no rule or phase): erased with a rule's table, deleted \
                with another's rows, or kept (keep) because nothing in it names anyone.
                """
        )

        public init() {}

        public func run() async throws {
            for rule in ErasureRule.allCases {
                var json = JSONLineWriter()
                json.add("action", rule.action.rawValue)
                json.add("ground", rule.ground)
                json.add("phase", rule.phase.rawValue)
                json.add("retention", rule.retention)
                json.add("rule", rule.id)
                json.add("table", rule.table)
                json.add("what", rule.what)
                printLine(json.object)
            }
            for companion in ErasureRule.companions {
                var json = JSONLineWriter()
                json.add("action", companion.action)
                json.add("ground", companion.ground)
                json.add("retention", companion.retention)
                json.add("table", companion.table)
                json.add("what", companion.what)
                printLine(json.object)
            }
        }
    }
}

import OpenAPIRuntime
import RaxxAPI
import RaxxCore

/// A generated operation's output, whose `default` case is a problem+json answer. Every
/// operation's output is one (each declares `default` as the Problem response), which gives every
/// call site one way from an answer to the error a person sees: `try await api.x().checked().ok`.
/// The conformances: ProblemAnswering+Operations.swift, which `Scripts/gen-operations` writes.
public protocol ProblemAnswering {
    /// The problem answer; throws when the answer is another one.
    var `default`: Components.Responses.Problem { get throws }
}

extension ProblemAnswering {
    /// The answer itself when it is not a problem; otherwise throws the problem as the error a
    /// person sees (`ErrorMapping.raxxError(problem:)`).
    public func checked() throws -> Self {
        guard let problem = try? self.default else { return self }
        throw try problem.raxxError
    }
}

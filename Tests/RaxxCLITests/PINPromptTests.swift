import Foundation
import RaxxCLI
import RaxxCore
import RaxxSecrets
import RaxxTestSupport
import RaxxVault
import Testing

/// The PIN prompts a command gives its ceremonies: who is asked again after a wrong PIN.
@Suite struct PINPromptTests {
    static let refusal = RaxxError(code: .wrongPIN, message: "Wrong PIN.", hint: "4 attempts left before the passkey locks.")

    static func text(_ pin: SecretBytes) -> String { pin.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    @Test func aPersonAtTheTerminalIsToldAndAskedAgain() throws {
        let world = TestWorld()
        world.pinsTyped = ["135799"]
        let context = try world.context(tool: "raxx-auth", requirement: .networkRequired, format: .json, quiet: true)
        let prompt = context.pinPrompt(.terminal)
        #expect(Self.text(try prompt.ask(false)) == "135799")
        let wrong = try #require(prompt.wrong)
        wrong(Self.refusal)
        // Said even with --quiet: a person is typing.
        #expect(world.stderr.contents == "Wrong PIN. 4 attempts left before the passkey locks.\n")
    }

    @Test func aPINFromAFileDescriptorIsNotAskedAgain() throws {
        let world = TestWorld()
        let context = try world.context(tool: "raxx-auth", requirement: .networkRequired, format: .json)
        #expect(context.pinPrompt(.fileDescriptor(3)).wrong == nil)
        #expect(context.pinPromptAskingOnce(.fileDescriptor(3)).wrong == nil)
    }

    /// A batch's one PIN: kept for the asks after the first, but a wrong one is forgotten so the
    /// PIN typed again is the one kept.
    @Test func theOnePINOfABatchIsForgottenWhenWrong() throws {
        let world = TestWorld()
        world.pinsTyped = ["135799", "246813"]
        let context = try world.context(tool: "raxx-order", requirement: .networkRequired, format: .json)
        let prompt = context.pinPromptAskingOnce(.terminal)
        #expect(Self.text(try prompt.ask(false)) == "135799")
        #expect(Self.text(try prompt.ask(false)) == "135799")
        let wrong = try #require(prompt.wrong)
        wrong(Self.refusal)
        #expect(Self.text(try prompt.ask(false)) == "246813")
        #expect(Self.text(try prompt.ask(false)) == "246813")
        #expect(world.pinsTyped.isEmpty)
    }
}

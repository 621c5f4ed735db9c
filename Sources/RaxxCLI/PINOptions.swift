import ArgumentParser
import RaxxCore
import RaxxSession
import RaxxVault

/// `--pin-fd N`: where a PIN comes from when there is no terminal to ask on.
public struct PINOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("pin-fd"),
            help: ArgumentHelp("Read the PIN from this open file descriptor instead of asking on the terminal.", valueName: "n"))
    public var pinFD: Int32?

    public init() {}

    public func validate() throws {
        if let fd = pinFD, fd < 0 { throw ValidationError("--pin-fd takes a file descriptor number (0 or more).") }
    }

    public var source: PINSource { pinFD.map(PINSource.fileDescriptor) ?? .terminal }

    /// A prompt for the ceremonies: asks (twice when confirming, on a terminal) when called.
    public var prompt: Ceremonies.PINPrompt {
        let source = self.source
        return { confirm in
            try PIN.read(from: source, prompt: confirm ? "Choose a PIN for this device's passkey: " : "PIN: ", confirm: confirm)
        }
    }
}

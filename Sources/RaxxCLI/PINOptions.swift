import ArgumentParser
import RaxxVault

/// `--pin-fd N`: where a PIN comes from when there is no terminal to ask on.
public struct PINOptions: ParsableArguments, Sendable {
    @Option(
        name: .customLong("pin-fd"),
        help: ArgumentHelp("Read the PIN from this open file descriptor instead of asking on the terminal.", valueName: "n"))
    public var pinFD: Int32?

    public init() {}

    public func validate() throws {
        if let fd = pinFD, fd < 0 { throw ValidationError("--pin-fd takes a file descriptor number (0 or more).") }
    }

    /// The terminal, or the file descriptor given; the context's PIN entry reads it
    /// (`context.pinPrompt(pin.source)`).
    public var source: PINSource { pinFD.map(PINSource.fileDescriptor) ?? .terminal }
}

/// `--code-fd N`: where the one-time code a registration's server emails comes from, when there
/// is no terminal to ask on.
public struct CodeOptions: ParsableArguments, Sendable {
    @Option(
        name: .customLong("code-fd"),
        help: ArgumentHelp(
            "Read the emailed one-time code (a line) from this open file descriptor instead of asking on the terminal.",
            valueName: "n"))
    public var codeFD: Int32?

    public init() {}

    public func validate() throws {
        if let fd = codeFD, fd < 0 { throw ValidationError("--code-fd takes a file descriptor number (0 or more).") }
    }

    public var source: PINSource { codeFD.map(PINSource.fileDescriptor) ?? .terminal }
}

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The controlling terminal (`/dev/tty`), for what a person types and nobody else should see: a
/// PIN, an export's passphrase. Opened apart from stdin, stdout and stderr, so that a prompt
/// still reaches the person when those are pipes, and closed when released.
/// The one home of a hidden prompt: the PIN (RaxxVault) and the passphrase (RaxxAge) both read
/// through it, each into its own wiped buffer.
public final class ControllingTerminal: Sendable {
    /// The open terminal's file descriptor, to read a line from while `hidden` runs.
    public let fd: Int32

    /// Opens the controlling terminal; `none` is thrown when there is none (a cron job, a pipe
    /// without a terminal).
    public init(orElse none: @autoclosure () -> RaxxError) throws(RaxxError) {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw none() }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Writes `text` to the terminal as it is.
    public func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            offset += n
        }
        bytes.removeAll()
    }

    /// Runs `read` with the terminal's echo off and `prompt` shown: what is typed is not shown.
    /// Echo goes off before the prompt is written, so nothing typed after the prompt appears is
    /// shown, and what was typed ahead of it is discarded (TCSAFLUSH) rather than read as the
    /// answer. Echo is restored, and the line ended (the Enter typed was not echoed), whatever
    /// `read` does.
    public func hidden<R>(prompt: String, _ read: (_ fd: Int32) throws(RaxxError) -> R) throws(RaxxError) -> R {
        var saved = termios()
        let isTerminal = tcgetattr(fd, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        defer {
            if isTerminal { tcsetattr(fd, TCSAFLUSH, &saved) }
            write("\n")
        }
        write(prompt)
        return try read(fd)
    }

    /// Turns the terminal's echo back on (after a hidden prompt cut short), if there is one.
    public static func echo() {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var state = termios()
        guard tcgetattr(fd, &state) == 0, state.c_lflag & tcflag_t(ECHO) == 0 else { return }
        state.c_lflag |= tcflag_t(ECHO)
        tcsetattr(fd, TCSANOW, &state)
    }
}

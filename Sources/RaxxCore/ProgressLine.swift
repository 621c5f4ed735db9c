import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One progress line on a terminal's stderr for long work: done of total, the percentage, the
/// rate and the time left ("refreshing: 300,000 of 1,510,000 changes  19%  13,725/s  1:28 left"),
/// redrawn in place at most a few times a second, and finished cleanly (cleared, or ended with a
/// newline) so that nothing after it is glued to it. Without a terminal it writes nothing.
///
/// Updates may come from any thread. The formatting is pure (`ProgressLine.format`), and the clock
/// is injected, so both can be tested without a terminal or time passing.
public final class ProgressLine: Sendable {
    /// What the line counts ("refreshing", "changes").
    public let label: String
    public let unit: String
    private let write: @Sendable (String) -> Void
    private let clock: @Sendable () -> Duration
    private let minimumInterval: Duration
    private let started: Duration
    private let state: Mutex<State>

    private struct State {
        var lastDrawn: Duration?
        var done = 0
        var total: Int?
        var detail: String?
        /// Waiting on one long step with no count: the line shows the time spent.
        var waiting = false
        /// The last step's name and start, once the count is over and that step began (`step`).
        var step: (name: String, started: Duration)?
        var ticker: Task<Void, Never>?
        var drawn = false
        var finished = false
    }

    /// - Parameters:
    ///   - write: writes (and flushes) text to the terminal; nil writes nothing at all (not a
    ///     terminal, or --quiet), so callers need no conditions of their own.
    ///   - clock: a monotonic clock (elapsed time since some fixed point).
    ///   - minimumInterval: redraws closer together than this are skipped (the last state is still
    ///     drawn by `finish`).
    public init(
        label: String, unit: String, total: Int? = nil, minimumInterval: Duration = .milliseconds(250),
        clock: @escaping @Sendable () -> Duration = ProgressLine.monotonicNow,
        write: (@Sendable (String) -> Void)?
    ) {
        self.label = label
        self.unit = unit
        self.minimumInterval = minimumInterval
        self.clock = clock
        self.write = write ?? { _ in }
        // A line that writes nothing never reads its clock either (a test's clock may not be planned).
        self.started = write == nil ? .zero : clock()
        state = Mutex(State(total: total, finished: write == nil))
    }

    /// A line on this process's stderr (file descriptor 2) when it is a terminal, else one that
    /// writes nothing: for tools that do not go through a command context (raxx-sandbox).
    public static func standardError(label: String, unit: String, total: Int? = nil, enabled: Bool = true) -> ProgressLine {
        let tty = enabled && isatty(2) == 1
        return ProgressLine(label: label, unit: unit, total: total, write: tty ? writeToStandardError : nil)
    }

    private static let writeToStandardError: @Sendable (String) -> Void = { text in
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(2, base + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
        }
    }

    /// A monotonic clock for lines drawn in real time.
    public static let monotonicNow: @Sendable () -> Duration = {
        let start = ContinuousClock.now
        return { ContinuousClock.now - start }
    }()

    /// The total, when it becomes known (or changes) after the work began.
    public func setTotal(_ total: Int?) {
        state.withLock { $0.total = total }
    }

    /// `done` of `total` are finished (the seeder's and the uploaders' callback shape).
    public func update(done: Int, total: Int) {
        set(done: done, total: .some(total))
    }

    /// `done` are finished (of the total given before, if any).
    public func update(done: Int) {
        set(done: done, total: nil)
    }

    /// `done` are finished, with what became of them ("9 delivered, 1 failed") after the count.
    public func update(done: Int, detail: String) {
        let now = reading()
        let text: String? = state.withLock { state in
            state.done = done
            state.detail = detail
            return drawIfDue(&state, now: now)
        }
        if let text { write(text) }
    }

    /// One more is finished.
    public func advance(by count: Int = 1) {
        let now = reading()
        let text: String? = state.withLock { state in
            state.done += count
            return drawIfDue(&state, now: now)
        }
        if let text { write(text) }
    }

    private func set(done: Int, total: Int??) {
        let now = reading()
        let text: String? = state.withLock { state in
            state.done = done
            if let total { state.total = total }
            return drawIfDue(&state, now: now)
        }
        if let text { write(text) }
    }

    /// Runs `work` (one long step that has no count of its own, a server's answer awaited) with the
    /// line showing the time spent on it, redrawn a few times a second, then finishes the line.
    public func whileWaiting<T: Sendable>(_ work: () async throws -> T) async rethrows -> T {
        let active = state.withLock { state -> Bool in
            state.waiting = true
            return !state.finished
        }
        defer { finish() }
        guard active else { return try await work() }
        let ticker = Task { [minimumInterval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: minimumInterval)
                if Task.isCancelled { break }
                let now = reading()
                let text: String? = state.withLock { drawIfDue(&$0, now: now) }
                if let text { write(text) }
            }
        }
        defer { ticker.cancel() }
        return try await work()
    }

    /// The count is over and one last step without a count of its own begins (a rebuild's indexes
    /// being built): the line says so and shows the time spent on it, redrawn a few times a second
    /// (from a task of its own: the step may hold its thread) until `finish`.
    public func step(_ name: String) {
        guard state.withLock({ !$0.finished && $0.step == nil }) else { return }
        let now = clock()
        let text: String? = state.withLock { state in
            guard !state.finished, state.step == nil else { return nil }
            state.step = (name, now)
            state.ticker = Task.detached { [weak self, minimumInterval] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: minimumInterval)
                    guard let self, !Task.isCancelled else { break }
                    let now = self.reading()
                    let text: String? = self.state.withLock { self.drawIfDue(&$0, now: now) }
                    if let text { self.write(text) }
                }
            }
            return drawIfDue(&state, now: now)
        }
        if let text { write(text) }
    }

    /// Clears the line for a message (a prompt, a warning) to be written; the next update draws
    /// it again below that message.
    public func clear() {
        let text: String? = state.withLock { state in
            guard !state.finished, state.drawn else { return nil }
            state.drawn = false
            state.lastDrawn = nil
            return Self.clearSequence
        }
        if let text { write(text) }
    }

    /// Ends the line: cleared (the default: the command's own output or summary follows), or, with
    /// `keep`, drawn a last time and ended with a newline. Nothing is written when nothing was drawn
    /// (work too short to show) and `keep` is false. Later calls do nothing.
    public func finish(keep: Bool = false) {
        let now = keep ? reading() : nil
        let (text, ticker): (String?, Task<Void, Never>?) = state.withLock { state in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            if keep, let now { return (Self.clearSequence + line(state, now: now) + "\n", state.ticker) }
            return (state.drawn ? Self.clearSequence : nil, state.ticker)
        }
        ticker?.cancel()
        if let text { write(text) }
    }

    /// Carriage return and erase-line: what every redraw and the clearing start with.
    public static let clearSequence = "\r\u{1B}[2K"

    /// The clock's reading for a redraw, or nil once the line is finished (a line that writes
    /// nothing, or is over, never reads its clock). Read before the lock is taken: the injected
    /// clock never runs under it.
    private func reading() -> Duration? {
        let finished = state.withLock { $0.finished }
        return finished ? nil : clock()
    }

    /// Called under the lock: the text to write, when a redraw is due (`now` from `reading()`).
    private func drawIfDue(_ state: inout State, now: Duration?) -> String? {
        guard !state.finished, let now else { return nil }
        // The first draw waits one interval too: work that ends sooner shows nothing at all.
        if now - (state.lastDrawn ?? started) < minimumInterval { return nil }
        state.lastDrawn = now
        state.drawn = true
        return Self.clearSequence + line(state, now: now)
    }

    private func line(_ state: State, now: Duration) -> String {
        let elapsed = now - started
        if let step = state.step { return Self.format(waiting: "\(label): \(step.name)", elapsed: now - step.started) }
        if state.waiting { return Self.format(waiting: label, elapsed: elapsed) }
        return Self.format(label: label, unit: unit, done: state.done, total: state.total, detail: state.detail, elapsed: elapsed)
    }

    // MARK: Formatting

    /// The line's text: "refreshing: 300,000 of 1,510,000 changes  19%  13,725/s  1:28 left", or
    /// without a total "refreshing: 300,000 changes  13,725/s". The rate is the average since the
    /// start; it and the time left are shown once a tenth of a second has passed. A detail follows
    /// the count: "pushing: 10 settled: 9 delivered, 1 failed  2,000/s".
    public static func format(label: String, unit: String, done: Int, total: Int?, detail: String? = nil, elapsed: Duration) -> String {
        let seconds = elapsed / .seconds(1)
        var text = "\(label): \(grouped(done))"
        var percent = ""
        if let total, total > 0 {
            let shown = max(total, done)
            text += " of \(grouped(shown))"
            percent = "  \(min(100, done * 100 / shown))%"
        }
        text += " \(unit)" + (detail.map { ": " + $0 } ?? "") + percent
        guard seconds >= 0.1, done > 0 else { return text }
        let rate = Double(done) / seconds
        text += "  \(grouped(Int(rate.rounded())))/s"
        if let total, total > done {
            text += "  \(clock(seconds: Double(total - done) / rate)) left"
        }
        return text
    }

    /// A step with no count: "applying the erasure plan… 0:12".
    public static func format(waiting label: String, elapsed: Duration) -> String {
        "\(label)… \(clock(seconds: Double(elapsed.components.seconds)))"
    }

    /// 1510000 -> "1,510,000".
    public static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// 88 -> "1:28", 3725 -> "1:02:05" (rounded up: "0:00 left" never shows while work remains).
    public static func clock(seconds: Double) -> String {
        let total = seconds.isFinite ? Int(min(seconds, 359_999).rounded(.up)) : 359_999
        let h = total / 3600, m = total / 60 % 60, s = total % 60
        let ss = s < 10 ? "0\(s)" : "\(s)"
        if h > 0 { return "\(h):\(m < 10 ? "0\(m)" : "\(m)"):\(ss)" }
        return "\(m):\(ss)"
    }
}

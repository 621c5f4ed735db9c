import RaxxBuildStamp

/// The suite's version, shared by every tool and the sandbox.
public enum RaxxVersion {
    public static let current = "0.1.0"

    /// The commit the build was made from (short hash), and its date: "unknown" outside a checkout.
    public static var commit: String { BuildStamp.commit }
    public static var commitDay: String { BuildStamp.day }

    /// What `--version` and `version` say: "raxx-order 0.1.0 (1a2b3c4, 2026-12-02)".
    public static func line(tool: String) -> String {
        tool + " " + current + " (" + commit + ", " + commitDay + ")"
    }
}

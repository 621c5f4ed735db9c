/// The suite's version, shared by every tool and the sandbox.
public enum RaxxVersion {
    public static let current = "0.1.0"
}

/// The commit the build was made from, as `Scripts/stamp-build` wrote it before the build
/// (`unknown` outside a git checkout). Apart from RaxxCore so that a new commit recompiles this
/// file alone.
public enum BuildStamp {
    /// The commit's short hash.
    public static var commit: String { buildCommit }
    /// The commit's date, YYYY-MM-DD.
    public static var day: String { buildDay }
}

import RaxxAPI

/// The most of an answer the client reads, per operation: past it the transfer is stopped
/// (`CurlTransport`, `RawRaptor`) and the command fails with `RaxxError.answerTooLarge`, having
/// used nothing of the answer. A server, whatever it sends, cannot fill the client's memory.
public enum AnswerCeiling {
    /// The longest change a sync page carries, in bytes, with room to spare: an order's upsert with
    /// every field, those the spec bounds at their bounds (client_order_id 64, symbol 32, int64s of
    /// 20 characters) and the unbounded ones wider than Raptor writes them (ids 64, decimals 24,
    /// reject_code 32), is 749 bytes of JSON (`AnswerCeilingTests` reads it as a page's change).
    static let largestChange = 1_024

    /// The most changes a page holds: getSyncChanges' `limit` is at most 10,000 in the spec
    /// (`AnswerCeilingTests` holds it to the spec's bounds).
    static let mostChangesPerPage = 10_000

    /// A page of delta sync: four times the largest the spec allows,
    /// 4 × 10,000 changes × 1,024 bytes = 40,960,000 bytes (39 MiB). The pages a refresh asks for
    /// (5,000 changes) are a megabyte or two.
    public static let syncPage = 4 * mostChangesPerPage * largestChange

    /// A data-subject export: one document of everything held about the subject, not paged, so it
    /// grows with their history: the 64 MiB every answer was allowed before the ceilings.
    public static let export = 64 << 20

    /// Any other answer: the largest, a page of 1,000 orders, alerts or audit events (their spec's
    /// `limit`), is well under a megabyte.
    public static let other = 4 << 20

    /// The ceiling of `operationID`'s answers, in bytes.
    public static func bytes(for operationID: String) -> Int {
        switch operationID {
        case Operations.GetSyncChanges.id: syncPage
        case Operations.ExportDSRData.id: export
        default: other
        }
    }
}

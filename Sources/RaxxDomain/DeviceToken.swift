import RaxxCore

/// An APNs device token as Raptor registers it (the spec's pattern `^[0-9a-fA-F]{64,200}$`): one
/// rule for `raxx-notify devices add`, which refuses a bad token before sending it, and the
/// sandbox's handler, which refuses it again (the generated server does not check patterns).
public enum DeviceToken {
    /// 64 to 200 ASCII hex digits (full-width digits, hex digits to `Character`, are not).
    public static func isRegistrable(_ token: String) -> Bool {
        (64...200).contains(token.utf8.count) && token.utf8.allSatisfy(\.isASCIIHexDigit)
    }
}

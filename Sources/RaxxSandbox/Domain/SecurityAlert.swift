import Foundation
import RaxxWire

/// What the account hears of a change to its security, the same way for every one: a
/// `security_alert` event on its feed (`title`, `body`, and `reason`, what it is about) and an
/// email (`mailSubject`, `mailBody(at:)`, which gives the change's time). The store raises one
/// inside the change's transaction, the event before the mail (`SecurityAlerts.raise`); the
/// audit entry of the change is the change's own.
enum SecurityAlert: Sendable, Equatable {
    /// A passkey added to an account that had one already (a new device, or a recovery with the
    /// emailed code). An account's first passkey is no alert.
    case passkeyAdded
    /// The passkey `credentialID` was removed, confirmed with another of the account's passkeys.
    case passkeyRemoved(credentialID: String)
    /// A spent renewal token was presented again: its session is revoked.
    case renewalTokenReused

    /// What the alert is about, the event's `reason`.
    var reason: String {
        switch self {
        case .passkeyAdded: "passkey_added"
        case .passkeyRemoved: "passkey_removed"
        case .renewalTokenReused: "renewal_token_reused"
        }
    }

    /// The event's title.
    var title: String {
        switch self {
        case .passkeyAdded: "A new passkey was added to your account."
        case .passkeyRemoved: "A passkey was removed from your account."
        case .renewalTokenReused: "A session was signed out to protect your account."
        }
    }

    /// The event's body: what to do if it was not the account's owner.
    var body: String {
        switch self {
        case .passkeyAdded: "If this was not you, sign in and remove it, and sign out your other sessions."
        case .passkeyRemoved: "If this was not you, sign in with another passkey and sign out your other sessions."
        case .renewalTokenReused: "A renewal token was used twice, so someone may hold a copy of it. Sign in again."
        }
    }

    /// The email's subject.
    var mailSubject: String {
        switch self {
        case .passkeyAdded: "A passkey was added to your Raxx account"
        case .passkeyRemoved: "A passkey was removed from your Raxx account"
        case .renewalTokenReused: "A Raxx session was signed out to protect your account"
        }
    }

    /// The email's text, for a change made at `time` (RFC 3339, UTC); a removal names the first
    /// 12 characters of the passkey's credential ID.
    func mailBody(at time: Date) -> String {
        let when = RFC3339.string(from: time)
        switch self {
        case .passkeyAdded:
            return """
                A new passkey was added to your Raxx account at \(when), with the one-time code we emailed \
                you: a new device, or a recovery after a lost or locked passkey. Your other passkeys still work.

                If this was not you, sign in with one of them, remove the new passkey (raxx-auth passkeys \
                remove), and sign out your other sessions.
                """
        case .passkeyRemoved(let credentialID):
            return """
                A passkey (\(credentialID.prefix(12))…) was removed from your Raxx account at \(when), \
                confirmed with another of its passkeys.

                If this was not you, sign in with a passkey you still have and sign out your other sessions.
                """
        case .renewalTokenReused:
            return """
                At \(when) a renewal token of one of your sessions was presented a second time, \
                so someone may hold a copy of it. That session is signed out; your passkeys are untouched.

                Sign in again on the device you use. If it keeps happening, check that device for software you do not know.
                """
        }
    }
}

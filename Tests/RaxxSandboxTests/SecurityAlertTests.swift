import Foundation
import RaxxAPI
import Testing

@testable import RaxxSandbox

/// What each security alert says, on the feed and by email: the texts the account reads, the
/// reason clients filter on, and the change's time (RFC 3339, UTC, with its milliseconds).
@Suite struct SecurityAlertTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000.25)  // 2026-11-18
    let when = "2026-11-18T11:06:40.250Z"

    @Test func aPasskeyAdded() {
        let alert = SecurityAlert.passkeyAdded
        #expect(alert.reason == "passkey_added")
        #expect(alert.title == "A new passkey was added to your account.")
        #expect(alert.body == "If this was not you, sign in and remove it, and sign out your other sessions.")
        #expect(alert.mailSubject == "A passkey was added to your Raxx account")
        #expect(
            alert.mailBody(at: now)
                == "A new passkey was added to your Raxx account at \(when), with the one-time code we emailed you: a new device, or a recovery "
                + "after a lost or locked passkey. Your other passkeys still work.\n\nIf this was not you, sign in with one of them, remove the "
                + "new passkey (raxx-auth passkeys remove), and sign out your other sessions.")
    }

    @Test func aPasskeyRemovedNamesThePrefixOfItsCredentialID() {
        let alert = SecurityAlert.passkeyRemoved(credentialID: "AbCdEfGhIjKlMnOpQrSt")
        #expect(alert.reason == "passkey_removed")
        #expect(alert.title == "A passkey was removed from your account.")
        #expect(alert.body == "If this was not you, sign in with another passkey and sign out your other sessions.")
        #expect(alert.mailSubject == "A passkey was removed from your Raxx account")
        let body = alert.mailBody(at: now)
        #expect(body.contains("(AbCdEfGhIjKl…)") && !body.contains("AbCdEfGhIjKlM"))
        #expect(
            body
                == "A passkey (AbCdEfGhIjKl…) was removed from your Raxx account at \(when), confirmed with another of its passkeys.\n\n"
                + "If this was not you, sign in with a passkey you still have and sign out your other sessions.")
        // An ID shorter than the prefix is named whole.
        #expect(SecurityAlert.passkeyRemoved(credentialID: "short").mailBody(at: now).contains("(short…)"))
    }

    @Test func aRenewalTokenReused() {
        let alert = SecurityAlert.renewalTokenReused
        #expect(alert.reason == "renewal_token_reused")
        #expect(alert.title == "A session was signed out to protect your account.")
        #expect(alert.body == "A renewal token was used twice, so someone may hold a copy of it. Sign in again.")
        #expect(alert.mailSubject == "A Raxx session was signed out to protect your account")
        #expect(
            alert.mailBody(at: now)
                == "At \(when) a renewal token of one of your sessions was presented a second time, so someone may hold a copy of it. That "
                + "session is signed out; your passkeys are untouched.\n\nSign in again on the device you use. If it keeps happening, check "
                + "that device for software you do not know.")
    }
}

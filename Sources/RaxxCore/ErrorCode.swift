/// Every code a tool prints in an error (`{"error":{"code":…}}`), each with its exit status and
/// what it means: raxx(7)'s table of error codes is rendered from `entry` (`Scripts/gen-man`
/// reads this file: one `case .name: (.status, "meaning")` a line). A code the server answers
/// with (Raptor's `ProblemCode`, in the spec) is passed through as it comes, by
/// `RaxxError(server:…)`.
public enum ErrorCode: String, CaseIterable, Sendable {
    case accountClosed = "account_closed"
    case ageClosed = "age_closed"
    case ageTooLong = "age_too_long"
    case alertsUnreadable = "alerts_unreadable"
    case algorithmUnsupported = "algorithm_unsupported"
    case alreadyPlaced = "already_placed"
    case alreadyRegistered = "already_registered"
    case answerTooLarge = "answer_too_large"
    case applyConnectionLost = "apply_connection_lost"
    case applyInterrupted = "apply_interrupted"
    case badInput = "bad_input"
    case badResponse = "bad_response"
    case busy = "busy"
    case cacheDamaged = "cache_damaged"
    case cacheUnreadable = "cache_unreadable"
    case cacheUnwritable = "cache_unwritable"
    case cancelled = "cancelled"
    case cancelledBySwitch = "cancelled_by_switch"
    case codeRequired = "code_required"
    case deviceSecretDamaged = "device_secret_damaged"
    case deviceSecretMissing = "device_secret_missing"
    case diskFull = "disk_full"
    case drift = "drift"
    case exportUnwritable = "export_unwritable"
    case inputUnreadable = "input_unreadable"
    case `internal` = "internal"
    case journalUnreadable = "journal_unreadable"
    case journalUnwritable = "journal_unwritable"
    case keyFilePermissions = "key_file_permissions"
    case keystoreBusy = "keystore_busy"
    case keystoreDamaged = "keystore_damaged"
    case keystoreOtherMachine = "keystore_other_machine"
    case keystorePermissions = "keystore_permissions"
    case keystoreUnreadable = "keystore_unreadable"
    case keystoreUnwritable = "keystore_unwritable"
    case libcurlUnavailable = "libcurl_unavailable"
    case liveTradingRefused = "live_trading_refused"
    case localDataUnwritable = "local_data_unwritable"
    case lockUnavailable = "lock_unavailable"
    case machineIDMissing = "machine_id_missing"
    case noCachedData = "no_cached_data"
    case noPasskey = "no_passkey"
    case noReceiptKey = "no_receipt_key"
    case notDelivered = "not_delivered"
    case notFound = "not_found"
    case notHTTP2 = "not_http2"
    case offline = "offline"
    case orderUnknown = "order_unknown"
    case otherAccount = "other_account"
    case outOfMemory = "out_of_memory"
    case outputUnwritable = "output_unwritable"
    case overdue = "overdue"
    case passkeyUnknown = "passkey_unknown"
    case passphraseSpent = "passphrase_spent"
    case pinLocked = "pin_locked"
    case planRequired = "plan_required"
    case planStale = "plan_stale"
    case providerToken = "provider_token"
    case providerTokenRefused = "provider_token_refused"
    case rateLimited = "rate_limited"
    case receiptInvalid = "receipt_invalid"
    case receiptKeyUnreadable = "receipt_key_unreadable"
    case receiptKeyUnwritable = "receipt_key_unwritable"
    case refreshRunning = "refresh_running"
    case rejected = "rejected"
    case rpIDRefused = "rp_id_refused"
    case rpMismatch = "rp_mismatch"
    case signInRequired = "sign_in_required"
    case signingFailed = "signing_failed"
    case sodiumUnavailable = "sodium_unavailable"
    case stale = "stale"
    case stepUpMismatch = "step_up_mismatch"
    case stepUpRefused = "step_up_refused"
    case stopped = "stopped"
    case tlsFailure = "tls_failure"
    case tlsRefused = "tls_refused"
    case tokenLock = "token_lock"
    case tokenLockBusy = "token_lock_busy"
    case tokenSigning = "token_signing"
    case transport = "transport"
    case unavailable = "unavailable"
    case unsafeFolder = "unsafe_folder"
    case usage = "usage"
    case wouldReject = "would_reject"
    case wrongPIN = "wrong_pin"
}

extension ErrorCode {
    /// The exit status of an error with this code.
    public var status: ExitStatus { entry.status }

    /// What the code means, for raxx(7).
    public var meaning: String { entry.meaning }

    /// The exit status, and what the code means: raxx(7)'s table, one line a code.
    var entry: (status: ExitStatus, meaning: String) {
        switch self {
        case .accountClosed: (.signInRequired, "the account was erased on request; what this device kept of it is removed")
        case .ageClosed: (.failure, "an age file already finished or failed was written to")
        case .ageTooLong: (.failure, "an age file too long for the format's chunk counter")
        case .alertsUnreadable: (.failure, "the kept alerts cannot be opened (raxx-notify)")
        case .algorithmUnsupported: (.failure, "the server accepts no passkey algorithm this device makes (ES256)")
        case .alreadyPlaced: (.dataError, "the same batch without client order ids was placed within a day: nothing was sent (--again places it)")
        case .alreadyRegistered: (.failure, "this device already holds a passkey for the server")
        case .answerTooLarge: (.unavailable, "the server's answer was larger than a client reads")
        case .applyConnectionLost: (.unavailable, "the connection was lost while an erasure was applied; applying again finishes it")
        case .applyInterrupted: (.cancelled, "waiting for an erasure was stopped (Ctrl-C); applying again finishes it")
        case .badInput: (.dataError, "a line or field of the input is bad (the message names it); nothing was changed")
        case .badResponse: (.failure, "the server's answer could not be read, or is not what the API says")
        case .busy: (.temporary, "another raxx-order is placing or reconciling orders")
        case .cacheDamaged: (.failure, "the cache file is damaged (raxx-cache refresh sets it aside and rebuilds it)")
        case .cacheUnreadable: (.failure, "the cache cannot be opened")
        case .cacheUnwritable: (.failure, "the damaged cache could not be moved aside")
        case .cancelled: (.cancelled, "the person said no at a prompt; nothing was done")
        case .cancelledBySwitch: (.unavailable, "the server's dead man's switch cancelled watched orders after the connection was lost")
        case .codeRequired: (.usage, "the server emailed a one-time code and none can be asked for (no terminal, no --code-fd)")
        case .deviceSecretDamaged: (.failure, "the device secret that seals the keystore is damaged")
        case .deviceSecretMissing: (.failure, "the device secret that seals the keystore is missing")
        case .diskFull: (.failure, "no space left for the cache; it was left as it was")
        case .drift: (.failure, "the cache differs from the server (raxx-cache verify)")
        case .exportUnwritable: (.failure, "the export or receipt file cannot be written")
        case .inputUnreadable: (.failure, "standard input or an input file cannot be read")
        case .internal: (.failure, "a fault of the tool itself")
        case .journalUnreadable: (.failure, "the order journal cannot be opened or read")
        case .journalUnwritable: (.failure, "the order journal cannot be written; nothing more was sent")
        case .keyFilePermissions: (.notPermitted, "the APNs key file can be read by other users (chmod 600)")
        case .keystoreBusy: (.temporary, "another raxx process is updating the keystore")
        case .keystoreDamaged: (.failure, "the keystore is damaged and cannot be opened; it was left as it is")
        case .keystoreOtherMachine: (.failure, "the keystore was sealed on another machine")
        case .keystorePermissions: (.failure, "the keystore can be read or written by other users")
        case .keystoreUnreadable: (.failure, "the keystore cannot be read")
        case .keystoreUnwritable: (.failure, "the keystore cannot be written")
        case .libcurlUnavailable: (.failure, "libcurl (7.68 or later) cannot be loaded")
        case .liveTradingRefused: (.notPermitted, "a live-trading account: orders are paper only")
        case .localDataUnwritable: (.failure, "a file in the state or cache folder cannot be written")
        case .lockUnavailable: (.failure, "a lock file cannot be opened")
        case .machineIDMissing: (.failure, "the machine has no identity (/etc/machine-id) to bind the keystore to")
        case .noCachedData: (.stale, "nothing was fetched yet to read offline")
        case .noPasskey: (.signInRequired, "this device has no passkey for the server (raxx-auth register)")
        case .noReceiptKey: (.failure, "no receipt key is kept for the server (raxx-dsr receipt fetches it)")
        case .notDelivered: (.failure, "some notifications were not delivered (see their results)")
        case .notFound: (.failure, "no such record in the cache")
        case .notHTTP2: (.unavailable, "the push endpoint does not speak HTTP/2")
        case .offline: (.unavailable, "no connection: the action needs the network; nothing was sent")
        case .orderUnknown: (.unavailable, "the connection was lost with an order in flight (raxx-order reconcile settles it)")
        case .otherAccount: (.failure, "this device's passkey belongs to another account")
        case .outOfMemory: (.failure, "not enough memory for a key derivation")
        case .outputUnwritable: (.failure, "standard output cannot be written (what the command did is done)")
        case .overdue: (.failure, "data-subject requests are past their deadline (raxx-dsr list --overdue)")
        case .passkeyUnknown: (.signInRequired, "the server does not know this device's passkey")
        case .passphraseSpent: (.failure, "a passphrase already used and wiped was used again")
        case .pinLocked: (.notPermitted, "too many wrong PINs: the passkey is locked")
        case .planRequired: (.failure, "an erasure has no plan to apply yet (raxx-dsr plan)")
        case .planStale: (.temporary, "the subject's data changed since the erasure was planned: plan again")
        case .providerToken: (.failure, "no APNs provider token could be had")
        case .providerTokenRefused: (.notPermitted, "APNs refused the provider token (key id, team id or key)")
        case .rateLimited: (.temporary, "the server asked the client to slow down")
        case .receiptInvalid: (.failure, "an erasure receipt does not verify")
        case .receiptKeyUnreadable: (.failure, "the kept receipt key cannot be read")
        case .receiptKeyUnwritable: (.failure, "the receipt key cannot be kept")
        case .refreshRunning: (.temporary, "another cache refresh is running")
        case .rejected: (.failure, "some orders of the batch were not placed (see their results)")
        case .rpIDRefused: (.notPermitted, "the server asked for a passkey of a site that is not its own: nothing was signed")
        case .rpMismatch: (.failure, "this device's passkey is for another site")
        case .signInRequired: (.signInRequired, "no session, or it ended: raxx-auth login")
        case .signingFailed: (.failure, "the passkey could not sign")
        case .sodiumUnavailable: (.failure, "libsodium could not start")
        case .stale: (.stale, "the cached data is older than --max-age")
        case .stepUpMismatch: (.notPermitted, "the server asked to confirm another action than this one")
        case .stepUpRefused: (.notPermitted, "the action could not be confirmed with the passkey")
        case .stopped: (.interrupted, "the run was stopped (130, or 143 by SIGTERM) after saying what became of every line")
        case .tlsFailure: (.unavailable, "the server's identity could not be verified")
        case .tlsRefused: (.unavailable, "the push endpoint's certificate was refused")
        case .tokenLock: (.failure, "the provider token's lock cannot be taken")
        case .tokenLockBusy: (.temporary, "another process held the provider token's lock too long")
        case .tokenSigning: (.failure, "a provider token could not be signed")
        case .transport: (.failure, "the request could not be completed")
        case .unavailable: (.unavailable, "the service is unavailable, or the server hung or failed; nothing was queued")
        case .unsafeFolder: (.notPermitted, "a state or cache folder or file is not safely this user's (a link, another owner, writable by others)")
        case .usage: (.usage, "the command line is wrong")
        case .wouldReject: (.failure, "a dry run found orders the server would reject")
        case .wrongPIN: (.notPermitted, "a wrong PIN (the message says how many tries are left)")
        }
    }
}

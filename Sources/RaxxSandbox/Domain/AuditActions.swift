import RaxxAPI
import RaxxDomain

/// What an audit record says was done: every action the sandbox records, in one place. The audit
/// table keeps the raw value (`order.placed`), which staff read in `raxx-dsr audit` and exports.
enum AuditAction: String, CaseIterable, Sendable {
    case accessRefused = "access.refused"
    case accountCreated = "account.created"
    case cancelAfterArmed = "cancel_after.armed"
    case cancelAfterDisarmed = "cancel_after.disarmed"
    case cancelAfterFired = "cancel_after.fired"
    case deviceRegistered = "device.registered"
    case deviceRevoked = "device.revoked"
    case deviceUnregistered = "device.unregistered"
    case dsrCancelled = "dsr.cancelled"
    case dsrErasureCompleted = "dsr.erasure_completed"
    case dsrErasureResumed = "dsr.erasure_resumed"
    case dsrErasureStarted = "dsr.erasure_started"
    case dsrExportDelivered = "dsr.export_delivered"
    case dsrExported = "dsr.exported"
    case dsrExtended = "dsr.extended"
    case dsrIdentityVerified = "dsr.identity_verified"
    case dsrOpened = "dsr.opened"
    case dsrPlanned = "dsr.planned"
    case dsrRefused = "dsr.refused"
    case orderCancelled = "order.cancelled"
    case orderExpired = "order.expired"
    case orderFilled = "order.filled"
    case orderOpen = "order.open"
    case orderPartiallyFilled = "order.partially_filled"
    case orderPending = "order.pending"
    case orderPlaced = "order.placed"
    case orderRefused = "order.refused"
    case orderRejected = "order.rejected"
    case passkeyRegistered = "passkey.registered"
    case passkeyRegistrationRefused = "passkey.registration_refused"
    case passkeyRemoved = "passkey.removed"
    case registrationCodeRefused = "registration.code_refused"
    case registrationCodeSent = "registration.code_sent"
    case sandboxChurned = "sandbox.churned"
    case sandboxSeeded = "sandbox.seeded"
    case sessionRenewalRefused = "session.renewal_refused"
    case sessionRevoked = "session.revoked"
    case sessionStarted = "session.started"
    case signInRefused = "sign_in.refused"
    case staffGranted = "staff.granted"
    case staffRevoked = "staff.revoked"
    case stepUpGranted = "step_up.granted"
    case stepUpRefused = "step_up.refused"
    case stepUpRequired = "step_up.required"

    /// An order's move to `status` (the paper engine's and the switch's), as audited.
    static func order(_ status: OrderStatus) -> AuditAction {
        switch status {
        case .cancelled: .orderCancelled
        case .expired: .orderExpired
        case .filled: .orderFilled
        case .rejected: .orderRejected
        case .open: .orderOpen
        case .partiallyFilled: .orderPartiallyFilled
        case .pending: .orderPending
        }
    }

    /// A request closed by staff as `status` (cancelled or refused).
    static func dsrClosed(_ status: Components.Schemas.DSRStatus) -> AuditAction {
        status == .refused ? .dsrRefused : .dsrCancelled
    }
}

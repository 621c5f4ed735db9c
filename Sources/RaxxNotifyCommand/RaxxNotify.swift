import ArgumentParser
import RaxxCLI
import RaxxCore

/// `raxx-notify`: Receive Raxx alerts and manage push delivery.
public struct RaxxNotify: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-notify",
        abstract: "Receive Raxx alerts and manage push delivery.",
        discussion: """
        Alerts: fill confirmed, order rejected, session expiring, security. Push delivery is opt-in.
        """,
        version: RaxxVersion.current
    )

    public init() {}
}

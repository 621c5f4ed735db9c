import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxDomain
import RaxxStore
import RaxxWire

extension RaxxNotify {
    /// `raxx-notify devices`: opt-in APNs devices.
    public struct Devices: AsyncParsableCommand {
        public static let configuration = CommandConfiguration(
            commandName: "devices",
            abstract: "Opt devices in to push alerts over APNs, list and remove them.",
            discussion: "Push is opt-in and never a contact channel: nothing is registered without devices add.",
            subcommands: [Add.self, List.self, Remove.self]
        )

        public init() {}
    }
}

extension RaxxNotify.Devices {
    static let columns: [Table.Column] = [.init("ID"), .init("Environment"), .init("Token"), .init("Label"), .init("Alerts"), .init("Added")]

    static func row(_ d: Components.Schemas.Device, time: (Date) -> String) -> [String] {
        [d.id, d.environment.rawValue, "…" + d.tokenSuffix, d.label ?? "-", d.alerts.map(\.rawValue).joined(separator: ","), time(d.createdAt)]
    }

    /// `devices add`.
    public struct Add: RaxxNotifyVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Register an APNs device token for push alerts.",
            discussion: """
                The token is the device's APNs token in hex (64 to 200 characters). --alerts chooses the \
                alert types it receives (default: all). The server keeps the token and shows back only its \
                last 8 characters. A malformed token or an unknown alert type exits 65 and registers \
                nothing. 
                """ + connectivity.helpLine
        )

        @Option(help: ArgumentHelp("The device's APNs token, in hex.", valueName: "hex"))
        var token: String
        @Option(
            help: ArgumentHelp("The APNs environment the token belongs to: sandbox or production.", valueName: "environment"),
            completion: .list(Components.Schemas.DeviceRegistration.EnvironmentPayload.allCases.map(\.rawValue)))
        var environment: String
        @Option(help: ArgumentHelp("A name for the device (at most 64 characters).", valueName: "label"))
        var label: String?
        @Option(
            help: ArgumentHelp("The alert types it receives, comma-separated: \(AlertTypes.names) (default: all).", valueName: "types"),
            completion: AlertTypes.completion)
        var alerts: String?
        @OptionGroup public var global: GlobalOptions

        public init() {}

        /// The registration, or exit 65 naming the field.
        func registration() throws(RaxxError) -> Components.Schemas.DeviceRegistration {
            guard DeviceToken.isRegistrable(token) else {
                throw RaxxError.badInput(field: "token", "must be the device's APNs token in hex, 64 to 200 characters")
            }
            guard let environment = Components.Schemas.DeviceRegistration.EnvironmentPayload(rawValue: environment) else {
                throw RaxxError.badInput(field: "environment", "must be sandbox or production, not '\(environment)'")
            }
            if let label, label.count > 64 { throw RaxxError.badInput(field: "label", "must be at most 64 characters") }
            var types: [AlertType]? = nil
            if let alerts {
                guard let parsed = AlertTypes(argument: alerts) else {
                    throw RaxxError.badInput(field: "alerts", "must be alert types among \(AlertTypes.names), not '\(alerts)'")
                }
                types = parsed.types.sorted { $0.rawValue < $1.rawValue }
            }
            return .init(token: token.lowercased(), environment: environment, label: label, alerts: types)
        }

        public func run(_ context: CommandContext) async throws {
            let registration = try registration()
            let device: Components.Schemas.Device
            switch try await context.signedInAPI().registerAPNsDevice(body: .json(registration)).checked() {
            case .created(let created): device = try created.body.json
            case .default(_, let problem): throw try problem.raxxError
            }
            try context.emit([device], columns: RaxxNotify.Devices.columns) { RaxxNotify.Devices.row($0, time: context.peopleTime) }
        }
    }

    /// `devices list`.
    public struct List: RaxxNotifyVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the account's push devices.",
            discussion: connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let devices = try await context.signedInAPI().listAPNsDevices().checked().ok.body.json.devices
            try context.emit(devices, columns: RaxxNotify.Devices.columns) { RaxxNotify.Devices.row($0, time: context.peopleTime) }
            if devices.isEmpty && context.format == .text { context.say("No push devices: push is opt-in (raxx-notify devices add).") }
        }
    }

    /// `devices remove ID`.
    public struct Remove: RaxxNotifyVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a push device (opt out).",
            discussion: connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The device's id.", valueName: "id"))
        var id: String
        @OptionGroup public var global: GlobalOptions

        public init() {}

        struct Record: Encodable {
            var id: String
            var removed: Bool
        }

        public func run(_ context: CommandContext) async throws {
            switch try await context.signedInAPI().revokeAPNsDevice(path: .init(deviceId: id)).checked() {
            case .noContent: break
            case .default(_, let problem): throw try problem.raxxError
            }
            try context.emit([Record(id: id, removed: true)], columns: [.init("ID"), .init("Removed")]) { [$0.id, "yes"] }
        }
    }
}

import ArgumentParser
import RaxxAPI
import RaxxCore

// Domain values as command-line arguments: parsed once, by the argument parser, with its own
// usage error (exit 64) naming the option and the values it takes.

extension RaxxDuration: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
    public static var defaultCompletionKind: CompletionKind { .default }
}

// The values each enum takes are spelled out (the same strings as the argument parser's defaults):
// its defaults build them through a key path per call, runtime type lookups that every start of a
// command with such an option paid while its arguments were being set up.

extension Components.Schemas.Side: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var allValueDescriptions: [String: String] { [:] }
}

extension Components.Schemas.OrderType: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var allValueDescriptions: [String: String] { [:] }
}

extension Components.Schemas.TimeInForce: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var allValueDescriptions: [String: String] { [:] }
}

extension Components.Schemas.OrderStatus: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var allValueDescriptions: [String: String] { [:] }
}

extension Components.Schemas.EventType: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var allValueDescriptions: [String: String] { [:] }
}

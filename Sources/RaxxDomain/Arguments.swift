import ArgumentParser
import RaxxAPI
import RaxxCore

// Domain values as command-line arguments: parsed once, by the argument parser, with its own
// usage error (exit 64) naming the option and the values it takes.

extension RaxxDuration: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
    public static var defaultCompletionKind: CompletionKind { .default }
}

extension Components.Schemas.Side: ExpressibleByArgument {}
extension Components.Schemas.OrderType: ExpressibleByArgument {}
extension Components.Schemas.TimeInForce: ExpressibleByArgument {}
extension Components.Schemas.OrderStatus: ExpressibleByArgument {}
extension Components.Schemas.EventType: ExpressibleByArgument {}

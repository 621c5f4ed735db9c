import Crypto
import Foundation

/// The canonical line of each synced row, so that the server's summary and a local copy can be
/// compared by checksum: fields joined by tabs, in a fixed order, one line per row; rows in id
/// order. Times are left out (they are not what a drift check is about).
public enum SyncChecksum {
    public static func positionLine(id: String, symbol: String, qty: Int64, avgPrice: String) -> String {
        "\(id)\t\(symbol)\t\(qty)\t\(avgPrice)\n"
    }

    public static func fillLine(id: String, orderID: String, symbol: String, side: String, qty: Int64, price: String) -> String {
        "\(id)\t\(orderID)\t\(symbol)\t\(side)\t\(qty)\t\(price)\n"
    }

    public static func orderLine(
        id: String, clientOrderID: String, symbol: String, side: String, qty: Int64, type: String,
        limitPrice: String?, status: String, filledQty: Int64, avgFillPrice: String?
    ) -> String {
        "\(id)\t\(clientOrderID)\t\(symbol)\t\(side)\t\(qty)\t\(type)\t\(limitPrice ?? "")\t\(status)\t\(filledQty)\t\(avgFillPrice ?? "")\n"
    }

    /// Counts rows and hashes their canonical lines (hex SHA-256), in the order they come.
    public struct Accumulator {
        private var hasher = SHA256()
        public private(set) var count: Int64 = 0

        public init() {}

        public mutating func add(_ line: String) {
            hasher.update(data: Data(line.utf8))
            count += 1
        }

        public var checksum: String { ASCIIHex.lowercase(hasher.finalize()) }

        /// Counts and hashes every line `next` hands out until it answers nil (a database cursor's
        /// rows, each made into its canonical line): what both the server's summary and the
        /// cache's are computed with.
        public static func over(_ next: () throws -> String?) rethrows -> Accumulator {
            var accumulator = Accumulator()
            while let line = try next() { accumulator.add(line) }
            return accumulator
        }
    }
}

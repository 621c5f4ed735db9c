import Foundation
import RaxxCore
import RaxxDomain
import RaxxOrders
import RaxxWire
import Testing

@Suite struct OrderIntentTests {
    func parse(_ lines: String...) throws -> [OrderIntent] {
        var n = 0
        return try OrderIntent.parse(jsonLines: lines.joined(separator: "\n")) {
            n += 1; return "gen-\(n)"
        }
    }

    func refusal(_ lines: String...) -> String? {
        var n = 0
        do {
            _ = try OrderIntent.parse(jsonLines: lines.joined(separator: "\n")) {
                n += 1; return "gen-\(n)"
            }
            return nil
        } catch {
            #expect(error.status == .dataError)
            // One bad line is the whole message, followed by what came of it.
            guard error.message.hasSuffix("; no order was sent") else { return error.message }
            return String(error.message.dropLast("; no order was sent".count))
        }
    }

    @Test func parsesABatchWithDefaults() throws {
        let intents = try parse(
            #"{"symbol":"aapl","side":"buy","qty":10}"#,
            "",
            #"{"symbol":"AAPL261218C00190000","side":"sell","qty":2,"type":"limit","limit_price":3.5,"tif":"gtc","client_order_id":"mine-1"}"#)
        #expect(intents.count == 2)
        var expected = try OrderIntent(
            line: 1, symbol: "AAPL", side: "buy", qty: .integer(10), type: nil, limitPrice: nil, tif: nil,
            clientOrderID: "gen-1", newID: { "x" })
        expected.idGenerated = true  // the line gave none
        #expect(intents[0] == expected)
        #expect(intents[0].idGenerated && !intents[1].idGenerated)
        #expect(intents[0].type == .market && intents[0].tif == .day && intents[0].clientOrderID == "gen-1")
        #expect(intents[1].line == 3)
        #expect(intents[1].limitPrice == "3.5")
        #expect(intents[1].clientOrderID == "mine-1")
    }

    @Test func refusalsNameTheLineAndTheField() {
        #expect(refusal(#"{"symbol":"AAPL","side":"buy","qty":1}"#, "not json") == "line 2: is not a JSON object of order fields")
        #expect(
            refusal(#"{"symbol":"AAPL","side":"buy","qty":1,"price":5}"#)
                == "line 1, field 'price': is not an order field (symbol, side, qty, type, limit_price, tif, client_order_id)")
        #expect(refusal(#"{"side":"buy","qty":1}"#) == "line 1, field 'symbol': is missing")
        #expect(refusal(#"{"symbol":"AAPL","qty":1}"#) == "line 1, field 'side': is missing")
        #expect(refusal(#"{"symbol":"AAPL","side":"hold","qty":1}"#) == "line 1, field 'side': must be buy or sell, not 'hold'")
        #expect(refusal(#"{"symbol":"AAPL","side":"buy","qty":0}"#) == "line 1, field 'qty': must be positive, not 0")
        #expect(refusal(#"{"symbol":"AAPL","side":"buy","qty":-3}"#) == "line 1, field 'qty': must be positive, not -3")
        #expect(refusal(#"{"symbol":"AAPL","side":"buy","qty":1.5}"#) == "line 1, field 'qty': must be a whole number")
        #expect(refusal(#"{"symbol":"AAPL","side":"buy","qty":"10"}"#) == "line 1, field 'qty': must be a whole number")
        #expect(refusal(#"{"symbol":"AAPL","side":"buy","qty":true}"#) == "line 1, field 'qty': must be a whole number")
        #expect(refusal(#"{"symbol":"AAPL","side":"buy","qty":1,"type":"limit"}"#) == "line 1, field 'limit_price': is required for a limit order")
        #expect(refusal(#"{"symbol":"AAPL","side":"buy","qty":1,"limit_price":"5"}"#) == "line 1, field 'limit_price': does not go with a market order")
        #expect(
            refusal(#"{"symbol":"AAPL","side":"buy","qty":1,"type":"limit","limit_price":"-5"}"#)
                == "line 1, field 'limit_price': must be a positive price with at most four decimals, not '-5'")
        #expect(refusal(#"{"symbol":"AAPL261399C00190000","side":"buy","qty":1}"#)?.hasPrefix("line 1, field 'symbol':") == true)
        #expect(refusal(#"{"symbol":"AAPL","side":"buy","qty":1,"tif":"ioc"}"#) == "line 1, field 'tif': must be day or gtc, not 'ioc'")
        #expect(
            refusal(#"{"symbol":"A","side":"buy","qty":1,"client_order_id":"x"}"#, #"{"symbol":"B","side":"buy","qty":1,"client_order_id":"x"}"#)
                == "line 2, field 'client_order_id': 'x' is already used on line 1")
        #expect(refusal("", " ") == "No orders on stdin: give one JSON object per line.")
    }

    @Test func optionSymbolsAreSentInTheirCanonicalForm() throws {
        let intent = try parse(#"{"symbol":"aapl  261218p00190000","side":"buy","qty":1}"#)[0]
        #expect(intent.symbol == "AAPL261218P00190000")
    }

    @Test func theActionHashIsTheServersCanonicalForm() throws {
        let intent = try parse(#"{"symbol":"MSFT","side":"buy","qty":40,"client_order_id":"c1"}"#)[0]
        let expected = OrderAction(clientOrderID: "c1", symbol: "MSFT", side: .buy, qty: 40, type: .market, limitPrice: nil, tif: .day, mode: .paper)
        #expect(intent.action == expected)
        #expect(expected.hash.count == 43)
    }

    /// The bytes journalled and sent are what the generated types' encoding (as JSONLines writes it) makes.
    @Test func theRequestsJSONIsTheEncodersByteForByte() throws {
        let intents = try parse(
            #"{"symbol":"aapl","side":"buy","qty":10}"#,
            #"{"symbol":"AAPL261218C00190000","side":"sell","qty":1000000,"type":"limit","limit_price":"3.5","tif":"gtc","client_order_id":"a.b_c:d-1"}"#,
            #"{"symbol":"MSFT","side":"sell","qty":1,"type":"limit","limit_price":187,"client_order_id":"Z"}"#)
        let deadlines = [
            Date(timeIntervalSince1970: 1_790_000_000), Date(timeIntervalSince1970: 1_790_000_000.125),
            Date(timeIntervalSince1970: 0),
        ]
        for intent in intents {
            for notAfter in deadlines {
                let expected = try JSONLines.line(intent.request(notAfter: notAfter))
                #expect(String(decoding: intent.requestJSON(notAfter: notAfter), as: UTF8.self) == expected)
            }
        }
        #expect(
            String(decoding: intents[1].requestJSON(notAfter: deadlines[1]), as: UTF8.self) == """
                {"client_order_id":"a.b_c:d-1","limit_price":"3.5","mode":"paper","not_after":"2026-09-21T14:13:20.125Z","qty":1000000,\
                "side":"sell","symbol":"AAPL261218C00190000","tif":"gtc","type":"limit"}
                """)
    }
}

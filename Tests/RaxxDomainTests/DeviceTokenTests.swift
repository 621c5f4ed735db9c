import RaxxDomain
import Testing

@Suite struct DeviceTokenTests {
    @Test func sixtyFourToTwoHundredASCIIHexDigits() {
        #expect(DeviceToken.isRegistrable(String(repeating: "aB3f", count: 16)))
        #expect(DeviceToken.isRegistrable(String(repeating: "0", count: 200)))
        #expect(!DeviceToken.isRegistrable(String(repeating: "a", count: 63)))
        #expect(!DeviceToken.isRegistrable(String(repeating: "a", count: 201)))
        #expect(!DeviceToken.isRegistrable(String(repeating: "g", count: 64)))
        // Full-width digits are hex digits to `Character`, not here.
        #expect(!DeviceToken.isRegistrable(String(repeating: "ab\u{FF11}\u{FF12}", count: 16)))
    }
}

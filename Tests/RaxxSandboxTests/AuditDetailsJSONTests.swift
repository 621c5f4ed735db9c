import Foundation
import Testing

@testable import RaxxSandbox

/// The audit trail's details keep the text every row was written in: the erasure finds an erased
/// subject's values in the rows by it.
@Suite struct AuditDetailsJSONTests {
    @Test func theTextIsTheStoredForm() {
        let details = ["url": "https://a.example/b", "note": "say \"hi\"\n\tthen\\go", "bell": "\u{7}", "é": "中😀"]
        #expect(
            AuditDetailsJSON.text(details)
                == #"{"bell":"\u0007","note":"say \"hi\"\n\tthen\\go","url":"https:\/\/a.example\/b","é":"中😀"}"#)
        #expect(AuditDetailsJSON.text([:]) == "{}")
        #expect(AuditDetailsJSON.quoted("a/b\"c") == #""a\/b\"c""#)
    }
}

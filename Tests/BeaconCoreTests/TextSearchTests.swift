import Testing

@testable import BeaconModel

@Suite struct TextSearchTests {
    @Test func findsTheFirstOccurrenceOrNone() {
        let text = "abcabd"
        #expect(text.range(ofText: "abd").map { text[$0] } == "abd")
        #expect(text.range(ofText: "ab").map { text.distance(from: text.startIndex, to: $0.lowerBound) } == 0)
        #expect(text.range(ofText: "abe") == nil)
        #expect(text.range(ofText: "abcabdx") == nil)
        #expect(text.includes(""))
        #expect("".range(ofText: "a") == nil)
        #expect("héllo wörld".includes("wörld"))
        #expect("aab".replacingText("a", with: "xy") == "xyxyb")
        #expect("aaa".replacingText("aa", with: "b") == "ba")
    }

    @Test func searchesByteSlicesInPlace() {
        let bytes: [UInt8] = [0, 1, 2, 1, 2, 3, 4]
        #expect(bytes.firstRange(ofElements: [1, 2, 3]) == 3..<6)
        #expect(bytes[4...].firstRange(ofElements: [1, 2]) == nil)
        #expect(bytes[1..<4].firstRange(ofElements: [2, 1]) == 2..<4)
        #expect(bytes[1..<4].firstRange(ofElements: [2, 1, 2]) == nil)
        #expect(bytes.firstRange(ofElements: [UInt8]()) == 0..<0)
    }
}

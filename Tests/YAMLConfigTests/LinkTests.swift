import Testing

@testable import YAMLConfig

@Test func libyamlLinks() {
    #expect(YAMLLibrary.version.0 == 0 && YAMLLibrary.version.1 >= 2)
}

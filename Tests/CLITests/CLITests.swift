import Testing
@testable import BeaconBridgeCLI

@Suite struct CLIDispatchTests {
    @Test func unknownCommandIsUsageError() {
        #expect(CommandLineTool.main(["frobnicate"]) == ExitCode.usage)
    }
    @Test func noArgumentsIsUsageError() {
        #expect(CommandLineTool.main([]) == ExitCode.usage)
    }
    @Test func versionExitsZero() {
        #expect(CommandLineTool.main(["--version"]) == ExitCode.ok)
    }
}

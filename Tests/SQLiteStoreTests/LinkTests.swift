import Testing

@testable import SQLiteStore

@Test func sqliteLinks() {
    #expect(SQLiteLibrary.versionNumber >= 3_035_000)
}

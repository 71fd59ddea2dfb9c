// Placeholder until its issue lands.
enum DecodeBench {
    static func run() { print("  (not built yet)") }
}

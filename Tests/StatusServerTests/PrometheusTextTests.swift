import Testing

@testable import StatusServer

@Suite struct PrometheusTextTests {
    @Test func writesFamiliesAndEscapesLabels() {
        var m = PrometheusText()
        m.family("x_total", .counter, help: "A \\ help\nline.")
        m.sample("x_total", [("cause", "a\"b\\c\nd")], 3)
        m.single("y_bytes", .gauge, help: "Y.", 1.5)
        m.single("z", .gauge, help: "Z.", .infinity)
        #expect(
            m.text == """
                # HELP x_total A \\\\ help\\nline.
                # TYPE x_total counter
                x_total{cause="a\\"b\\\\c\\nd"} 3
                # HELP y_bytes Y.
                # TYPE y_bytes gauge
                y_bytes 1.5
                # HELP z Z.
                # TYPE z gauge
                z +Inf

                """)
    }
}

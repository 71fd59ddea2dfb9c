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

    @Test func writesAHistogramWithCumulativeBucketsSumAndCount() {
        var m = PrometheusText()
        m.histogram(
            "d_seconds", help: "D.", buckets: [(0.005, 1), (0.5, 3), (.infinity, 4)], sum: 2.75, count: 4)
        // Without a +Inf bucket given, one is added with the count.
        m.histogram("e_seconds", help: "E.", buckets: [(1, 0)], sum: 0, count: 2)
        #expect(
            m.text == """
                # HELP d_seconds D.
                # TYPE d_seconds histogram
                d_seconds_bucket{le="0.005"} 1
                d_seconds_bucket{le="0.5"} 3
                d_seconds_bucket{le="+Inf"} 4
                d_seconds_sum 2.75
                d_seconds_count 4
                # HELP e_seconds E.
                # TYPE e_seconds histogram
                e_seconds_bucket{le="1"} 0
                e_seconds_bucket{le="+Inf"} 2
                e_seconds_sum 0
                e_seconds_count 2

                """)
    }
}

/// A chart's value axis drawn over the body of the data, not its extremes: one slow last
/// sample (a walk to the car, a stop before the watch was stopped) must not stretch the pace
/// axis to 30:00 /km and flatten the run into a line. The bounds are the 2nd and 98th
/// percentiles, widened by a tenth of their span (at least `minimumSpan`) and rounded out to
/// `step`; values beyond them are drawn clipped at the chart's edge.
enum ChartAxis {
    /// [min, max], or nil with fewer than two values (the chart library's own then).
    static func robust(_ values: [Double?], step: Double, minimumSpan: Double) -> [Double]? {
        let sorted = values.compactMap { $0 }.filter(\.isFinite).sorted()
        guard sorted.count >= 2 else { return nil }
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))] }
        var (low, high) = (percentile(0.02), percentile(0.98))
        let margin = max((high - low) * 0.1, (minimumSpan - (high - low)) / 2, 0)
        low -= margin
        high += margin
        return [max(0, (low / step).rounded(.down) * step), (high / step).rounded(.up) * step]
    }
}

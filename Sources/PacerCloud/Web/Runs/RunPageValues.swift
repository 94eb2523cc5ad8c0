import CloudModel
import PacerContract

/// What the run page and a shared or monitored run's page both show of a run's view: the
/// summary line, the splits and the map's and charts' data block.
enum RunPageValues {
    static func common(summary: RunSummaryBody, view: RunView, date: String) throws -> [String: Any] {
        // A whole split shows the kilometre it ends at; the shorter rest, the run's distance.
        let splitM = Double(view.splitKm) * 1_000
        let splits: [[String: Any]] = view.splits.map { split in
            ["km": split.meters >= splitM - 0.5 ? String(split.km) : String(format: "%.2f", Double(split.km - view.splitKm) + split.meters / 1_000),
             "time": RunnerFormat.duration(split.seconds), "pace": RunnerFormat.pace(split.seconds * 1_000 / max(split.meters, 1)),
             "hr": split.hrAvg.map { String(Int($0)) } ?? "–"]
        }
        let data = RunPageData(track: view.track, kmMarks: view.kmMarks, km: view.chartKm, pace: view.pace, hr: view.heartRate,
                               paceAxis: ChartAxis.robust(view.pace, step: 15, minimumSpan: 60),
                               hrAxis: ChartAxis.robust(view.heartRate, step: 5, minimumSpan: 20))
        var values: [String: Any] = [
            "date": date, "distance": RunnerFormat.distance(summary.distance_m), "duration": RunnerFormat.duration(summary.moving_time_s),
            "pace": RunnerFormat.pace(summary.avg_pace_s_per_km), "splits": splits, "data": try PageData.script(data),
            "split_km": view.splitKm > 1 ? String(view.splitKm) : false, "has_hr": !view.heartRateSeconds.isEmpty,
            "stylesheet": Assets.url("leaflet/leaflet.css"), "referrer": PageData.mapReferrer,
        ]
        if let hr = summary.hr_avg { values["hr_avg"] = "avg \(Int(hr.rounded())) bpm" + (summary.hr_max.map { ", max \($0)" } ?? "") }
        return values
    }

    /// The page's heading: the runner's name for the run, else its sport and date.
    static func heading(_ details: RunDetails, date: String) -> String {
        details.title ?? "\(details.sport.label) of \(date)"
    }
}

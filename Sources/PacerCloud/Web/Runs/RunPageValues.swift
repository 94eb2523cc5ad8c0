import CloudModel
import PacerContract

/// What the run page and a shared or monitored run's page both show of a run's view: the
/// summary line, the splits and the map's and charts' data block.
enum RunPageValues {
    /// In `unit`: the viewer's, or on a shared page the runner's.
    /// A ride's paces are speeds.
    static func common(summary: RunSummaryBody, view: RunView, date: String, sport: Sport = .run,
                       unit: DistanceUnit = PageLayout.units) throws -> [String: Any] {
        // A whole split shows the kilometre (or mile) it ends at; the shorter rest, the run's distance.
        let table = view.table(unit)
        let splitM = Double(table.every) * unit.metres
        let splits: [[String: Any]] = table.splits.map { split in
            ["km": split.meters >= splitM - 0.5 ? String(split.km) : String(format: "%.2f", Double(split.km - table.every) + unit.amount(metres: split.meters)),
             "time": RunnerFormat.duration(split.seconds), "pace": RunnerFormat.pace(split.seconds * 1_000 / max(split.meters, 1), sport: sport, in: unit),
             "hr": split.hrAvg.map { String(Int($0)) } ?? "–"]
        }
        // The charts in the unit too: distance along the axis, pace per unit.
        let pace = view.pace.map { $0.map { unit.pace(secondsPerKm: $0).rounded() } }
        let data = RunPageData(unit: unit.symbol, track: view.track, marks: table.marks,
                               distance: view.chartKm.map { (unit.amount(metres: $0 * 1_000) * 100).rounded() / 100 },
                               pace: pace, hr: view.heartRate,
                               elevation: view.elevation.map { $0.map { (unit.height(metres: $0) * 10).rounded() / 10 } }, heightUnit: unit.heightSymbol,
                               paceAxis: ChartAxis.robust(pace, step: 15, minimumSpan: 60),
                               hrAxis: ChartAxis.robust(view.heartRate, step: 5, minimumSpan: 20))
        var values: [String: Any] = [
            "date": date, "distance": RunnerFormat.distance(summary.distance_m, in: unit), "duration": RunnerFormat.duration(summary.moving_time_s),
            "pace": RunnerFormat.pace(summary.avg_pace_s_per_km, sport: sport, in: unit), "splits": splits, "data": try PageData.script(data),
            "unit": unit.symbol, "split_km": table.every > 1 ? String(table.every) : false, "has_hr": !view.heartRateSeconds.isEmpty,
            "has_elevation": !view.elevation.isEmpty,
            "stylesheet": Assets.url("leaflet/leaflet.css"), "referrer": PageData.mapReferrer,
        ]
        if let gain = view.elevationGainM { values["elevation_gain"] = "\(Int(unit.height(metres: gain).rounded())) \(unit.heightSymbol) climbed" }
        if let hr = summary.hr_avg { values["hr_avg"] = "avg \(Int(hr.rounded())) bpm" + (summary.hr_max.map { ", max \($0)" } ?? "") }
        return values
    }

    /// The page's heading: the runner's name for the run, else its sport and date.
    static func heading(_ details: RunDetails, date: String) -> String {
        details.title ?? "\(details.sport.label) of \(date)"
    }
}

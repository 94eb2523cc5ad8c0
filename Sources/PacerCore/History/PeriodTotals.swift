/// Distance, moving time and run count per week, month or year in the runner's time zone.
///
/// A run belongs, whole, to the period of the local date it started on: a run from 23:40 on Sunday
/// to 00:30 on Monday counts for the week that ended, as in any training log. The local date comes
/// from `utcOffset`, asked at the run's own start instant, so runs before and after a daylight-saving
/// change are each placed by the offset in force when they started (see `LocalDate`).
///
/// Input order does not matter; the output is chronological.
public enum PeriodTotals {
    /// Totals for every period of `kind` that has at least one run, oldest first. Periods without
    /// runs are left out; `CalendarPeriod.advanced(by:)` walks the gaps for a chart.
    public static func totals(
        of runs: [HistoryRun], per kind: PeriodKind, utcOffset: (Timestamp) -> Int
    ) -> [PeriodTotal] {
        var byPeriod: [CalendarPeriod: PeriodTotal] = [:]
        for run in runs {
            let period = CalendarPeriod(kind, containing: run.start, utcOffset: utcOffset)
            byPeriod[period, default: PeriodTotal(period: period)].add(run)
        }
        return byPeriod.values.sorted { $0.period < $1.period }
    }

    /// The total for one period (zero runs if none fell in it).
    public static func total(
        of runs: [HistoryRun], in period: CalendarPeriod, utcOffset: (Timestamp) -> Int
    ) -> PeriodTotal {
        var total = PeriodTotal(period: period)
        for run in runs where CalendarPeriod(period.kind, containing: run.start, utcOffset: utcOffset) == period {
            total.add(run)
        }
        return total
    }
}

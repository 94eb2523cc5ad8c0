import Testing
@testable import PacerCore

private func at(_ text: String) -> Timestamp { Timestamp(iso8601: text)! }
private func date(_ y: Int, _ m: Int, _ d: Int) -> LocalDate { LocalDate(year: y, month: m, day: d)! }
private func utc(_: Timestamp) -> Int { 0 }

/// Europe/Rome in 2026 without a time-zone database: CET (+1 h) until 29 March 01:00 UTC, CEST
/// (+2 h) until 25 October 01:00 UTC, CET again after.
private func rome(_ t: Timestamp) -> Int {
    t < at("2026-03-29T01:00:00Z") || t >= at("2026-10-25T01:00:00Z") ? 3600 : 7200
}

private func run(_ start: String, _ km: Double, minutes: Double = 30) -> HistoryRun {
    HistoryRun(start: at(start), distance: km * 1000, movingTime: minutes * 60)
}

@Suite(.timeLimit(.minutes(10))) struct HistoryPeriodTotalsTests {
    // Every expected ISO week below was checked with Python's datetime.date.isocalendar().
    @Test(arguments: [
        ("2026-01-01", "2026-W01"),  // Thursday: week 1 of its own year
        ("2025-12-29", "2026-W01"),  // Monday of that week, still 2025 on the calendar
        ("2025-12-28", "2025-W52"),
        ("2024-12-30", "2025-W01"),
        ("2026-12-28", "2026-W53"),
        ("2026-12-31", "2026-W53"),  // Thursday
        ("2027-01-01", "2026-W53"),  // Friday: belongs to the previous ISO year
        ("2027-01-03", "2026-W53"),  // Sunday
        ("2027-01-04", "2027-W01"),  // Monday
        ("2020-12-31", "2020-W53"),
        ("2021-01-03", "2020-W53"),
        ("2021-01-04", "2021-W01"),
        ("2027-12-31", "2027-W52"),
        ("2028-01-01", "2027-W52"),
        ("2026-05-10", "2026-W19"),  // Sunday
        ("2026-05-11", "2026-W20"),  // Monday
    ])
    func isoWeekLabels(_ day: String, _ label: String) throws {
        let t = at(day + "T12:00:00Z")
        let week = CalendarPeriod(.week, containing: t, utcOffset: utc)
        #expect(week.label == label)
        #expect(CalendarPeriod(label: label) == week)
        #expect(week.firstDay.weekday == 1)
        #expect(week.lastDay.weekday == 7)
        let d = LocalDate(containing: t, utcOffset: utc)
        #expect(week.firstDay <= d && d <= week.lastDay)
    }

    @Test func weeksInISOYears() {
        // From Python: the years 1990...2059 with 53 ISO weeks.
        let long: Set = [1992, 1998, 2004, 2009, 2015, 2020, 2026, 2032, 2037, 2043, 2048, 2054]
        for year in 1990...2059 {
            #expect(CalendarPeriod.weeks(inISOYear: year) == (long.contains(year) ? 53 : 52), "\(year)")
        }
        #expect(CalendarPeriod(isoYear: 2026, week: 53) != nil)
        #expect(CalendarPeriod(isoYear: 2027, week: 53) == nil)
        #expect(CalendarPeriod(isoYear: 2026, week: 0) == nil)
    }

    @Test func weeksTileTheCalendar() {
        // Every day from 2019 to 2031 is in exactly the week that starts on its Monday, and
        // consecutive weeks follow each other through 52/53-week years.
        var day = date(2018, 12, 31)  // a Monday
        var week = CalendarPeriod(.week, containing: day)
        while day < date(2032, 1, 1) {
            for offset in 0..<7 {
                #expect(CalendarPeriod(.week, containing: day.adding(days: offset)) == week)
            }
            #expect(week.firstDay == day)
            #expect(week.dayCount == 7)
            day = day.adding(days: 7)
            let next = week.advanced(by: 1)
            #expect(next.advanced(by: -1) == week)
            #expect(next.number == 1 || next.number == week.number + 1)
            week = next
        }
    }

    @Test func periodBoundariesAndArithmetic() {
        let w53 = CalendarPeriod(isoYear: 2026, week: 53)!
        #expect(w53.firstDay == date(2026, 12, 28))
        #expect(w53.lastDay == date(2027, 1, 3))
        #expect(CalendarPeriod(label: "2027-W01")!.advanced(by: -1) == w53)
        #expect(CalendarPeriod(isoYear: 2026, week: 19)!.firstDay == date(2026, 5, 4))

        let february = CalendarPeriod(year: 2028, month: 2)!
        #expect(february.label == "2028-02")
        #expect(february.dayCount == 29)
        #expect(february.lastDay == date(2028, 2, 29))
        #expect(CalendarPeriod(year: 2026, month: 12)!.advanced(by: 1) == CalendarPeriod(year: 2027, month: 1))
        #expect(CalendarPeriod(year: 2026, month: 1)!.advanced(by: -13) == CalendarPeriod(year: 2024, month: 12))
        #expect(CalendarPeriod(year: 2026).dayCount == 365)
        #expect(CalendarPeriod(year: 2028).dayCount == 366)
        #expect(CalendarPeriod(year: 2026).advanced(by: 1).label == "2027")
        #expect(LocalDate(year: 2026, month: 2, day: 29) == nil)
        #expect(LocalDate(year: 2026, month: 4, day: 31) == nil)
        #expect(date(2026, 5, 10).description == "2026-05-10")
    }

    @Test(arguments: ["", "26", "2026-5", "2026-13", "2026-00", "2026-W00", "2027-W53", "2026-W5", "2026W19",
                      "2026-w19", "20a6", "2026-05-01"])
    func rejectsLabelsThatAreNotPeriods(_ label: String) {
        #expect(CalendarPeriod(label: label) == nil)
    }

    @Test func negativeOffsetMovesTheRunToTheDayBefore() {
        // 03:00 UTC on Monday 11 May is 22:00 on Sunday 10 May in UTC−5.
        let t = at("2026-05-11T03:00:00Z")
        let minusFive: (Timestamp) -> Int = { _ in -18_000 }
        #expect(LocalDate(containing: t, utcOffset: minusFive) == date(2026, 5, 10))
        #expect(LocalDate(containing: t, utcOffset: minusFive).weekday == 7)
        #expect(CalendarPeriod(.week, containing: t, utcOffset: minusFive).label == "2026-W19")
        #expect(CalendarPeriod(.week, containing: t, utcOffset: utc).label == "2026-W20")

        let runs = [run("2026-05-11T03:00:00Z", 10), run("2026-05-11T12:00:00Z", 5)]
        let weeks = PeriodTotals.totals(of: runs, per: .week, utcOffset: minusFive)
        #expect(weeks.map(\.period.label) == ["2026-W19", "2026-W20"])
        #expect(weeks.map(\.distance) == [10_000, 5_000])
    }

    @Test func offsetIsAskedAtEachRunsOwnInstant() {
        let runs = [
            run("2026-03-28T22:30:00Z", 8),   // Sat 23:30 CET: W13, March
            run("2026-03-29T00:30:00Z", 10),  // Sun 01:30 CET, just before the change: W13
            run("2026-03-29T22:30:00Z", 5),   // Mon 00:30 CEST (with a fixed +1 h: Sun 23:30, W13)
            run("2026-03-31T22:30:00Z", 12),  // Wed 1 April 00:30 CEST: April, not March
            run("2026-10-25T22:30:00Z", 6),   // Sun 23:30 CET after the change back (at +2 h: Mon, W44)
        ]
        let weeks = PeriodTotals.totals(of: runs, per: .week, utcOffset: rome)
        #expect(weeks.map(\.period.label) == ["2026-W13", "2026-W14", "2026-W43"])
        #expect(weeks.map(\.runCount) == [2, 2, 1])
        #expect(weeks.map(\.distance) == [18_000, 17_000, 6_000])
        #expect(weeks.map(\.movingTime) == [3600, 3600, 1800])

        let months = PeriodTotals.totals(of: runs, per: .month, utcOffset: rome)
        #expect(months.map(\.period.label) == ["2026-03", "2026-04", "2026-10"])
        #expect(months.map(\.distance) == [23_000, 12_000, 6_000])

        // With either fixed offset one of the runs lands in another week: the offset really is
        // asked per instant.
        let winter = PeriodTotals.totals(of: runs, per: .week, utcOffset: { _ in 3600 })
        #expect(winter.map(\.period.label) == ["2026-W13", "2026-W14", "2026-W43"])
        #expect(winter.map(\.runCount) == [3, 1, 1])
        let summer = PeriodTotals.totals(of: runs, per: .week, utcOffset: { _ in 7200 })
        #expect(summer.map(\.period.label) == ["2026-W13", "2026-W14", "2026-W44"])
        #expect(summer.map(\.runCount) == [2, 2, 1])
    }

    @Test func isoWeekYearBoundaryTotals() {
        let runs = [
            run("2027-01-02T10:00:00Z", 10),  // input order does not matter
            run("2026-12-31T10:00:00Z", 8),
            run("2027-01-04T08:00:00Z", 6),
            run("2026-12-27T08:00:00Z", 4),   // Sunday of 2026-W52
        ]
        let weeks = PeriodTotals.totals(of: runs, per: .week, utcOffset: utc)
        #expect(weeks.map(\.period.label) == ["2026-W52", "2026-W53", "2027-W01"])
        #expect(weeks.map(\.distance) == [4_000, 18_000, 6_000])
        #expect(weeks.map(\.runCount) == [1, 2, 1])

        let months = PeriodTotals.totals(of: runs, per: .month, utcOffset: utc)
        #expect(months.map(\.period.label) == ["2026-12", "2027-01"])
        #expect(months.map(\.distance) == [12_000, 16_000])

        let years = PeriodTotals.totals(of: runs, per: .year, utcOffset: utc)
        #expect(years.map(\.period.label) == ["2026", "2027"])
        #expect(years.map(\.distance) == [12_000, 16_000])

        // At +14 h (Pacific/Kiritimati) 2026-12-31T10:00Z is already 1 January 2027 (a Friday):
        // a new month and year, still 2026-W53.
        let kiritimati: (Timestamp) -> Int = { _ in 14 * 3600 }
        let t = at("2026-12-31T10:00:00Z")
        #expect(CalendarPeriod(.year, containing: t, utcOffset: kiritimati).label == "2027")
        #expect(CalendarPeriod(.month, containing: t, utcOffset: kiritimati).label == "2027-01")
        #expect(CalendarPeriod(.week, containing: t, utcOffset: kiritimati).label == "2026-W53")
    }

    @Test func totalForOnePeriod() {
        let runs = [run("2026-05-04T06:00:00Z", 10, minutes: 50), run("2026-05-10T21:00:00Z", 5, minutes: 25),
                    run("2026-05-11T06:00:00Z", 7)]
        let week = CalendarPeriod(isoYear: 2026, week: 19)!
        let total = PeriodTotals.total(of: runs, in: week, utcOffset: utc)
        #expect(total == PeriodTotal(period: week, runCount: 2, distance: 15_000, movingTime: 4500))
        #expect(total.averagePacePerKm == 300)
        // 21:00 UTC on Sunday is already Monday at +3 h.
        #expect(PeriodTotals.total(of: runs, in: week, utcOffset: { _ in 3 * 3600 }).runCount == 1)
        let empty = PeriodTotals.total(of: runs, in: week.advanced(by: 5), utcOffset: utc)
        #expect(empty == PeriodTotal(period: week.advanced(by: 5)))
        #expect(empty.averagePacePerKm == nil)
        #expect(PeriodTotals.totals(of: [], per: .year, utcOffset: utc).isEmpty)
    }

    @Test func corruptValuesCountTheRunButAddNothing() {
        let runs = [run("2026-05-04T06:00:00Z", 10), HistoryRun(start: at("2026-05-05T06:00:00Z"), distance: .nan,
                                                                movingTime: .infinity)]
        let total = PeriodTotals.totals(of: runs, per: .week, utcOffset: utc)
        #expect(total.count == 1)
        #expect(total[0].runCount == 2)
        #expect(total[0].distance == 10_000)
        #expect(total[0].movingTime == 1800)
    }

    @Test func searchRangeCoversEveryZone() {
        let week = CalendarPeriod(isoYear: 2026, week: 53)!
        let range = week.utcSearchRange
        for offset in [-18 * 3600, -5 * 3600, 0, 14 * 3600, 18 * 3600] {
            let zone: (Timestamp) -> Int = { _ in offset }
            // The first and last millisecond of the week in that zone.
            let first = Timestamp(milliseconds: week.firstDay.daysSinceEpoch * 86_400_000 - Int64(offset) * 1000)
            let last = Timestamp(milliseconds: (week.lastDay.daysSinceEpoch + 1) * 86_400_000 - Int64(offset) * 1000 - 1)
            #expect(CalendarPeriod(.week, containing: first, utcOffset: zone) == week)
            #expect(CalendarPeriod(.week, containing: last, utcOffset: zone) == week)
            #expect(range.contains(first) && range.contains(last))
        }
    }

    @Test func chronologicalOrder() {
        let periods = [CalendarPeriod(label: "2027-W01")!, CalendarPeriod(label: "2026-W53")!,
                       CalendarPeriod(label: "2026-12")!, CalendarPeriod(label: "2026")!]
        #expect(periods.sorted().map(\.label) == ["2026", "2026-12", "2026-W53", "2027-W01"])
    }

    @Test func summaryWithoutStartIsNotARun() {
        let summary = RunSummary(distance: 0, movingTime: 0, elapsedTime: 0, averagePacePerKm: nil, maxSpeed: 0)
        #expect(HistoryRun(summary) == nil)
        var started = summary
        started.startTime = at("2026-05-10T07:30:00Z")
        started.distance = 3000
        #expect(HistoryRun(started) == HistoryRun(start: at("2026-05-10T07:30:00Z"), distance: 3000, movingTime: 0))
    }
}

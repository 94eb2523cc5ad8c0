import CloudModel
import Foundation

/// A month shown as whole weeks, Monday to Sunday (the plan's and the runs' calendars): which
/// month the `month` query asks for, its days, and the months before and after.
struct MonthGrid {
    let year: Int, month: Int
    /// Day numbers (`PlanDates`): the month's first and last, and the grid's.
    let first: Int, last: Int, gridStart: Int, gridEnd: Int

    static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]

    init(year: Int, month: Int) {
        self.year = year
        self.month = month
        let (first, next) = PlanDates.month(year: year, month: month)
        self.first = first
        last = next - 1
        gridStart = first - PlanDates.weekday(first)
        gridEnd = last + 6 - PlanDates.weekday(last)
    }

    /// The month of `text` ("2026-05"), or the month of `today` when it is absent; a 400 naming
    /// the field for anything else ("+123-05" too: digits only).
    static func asked(_ text: String?, today: Int) throws(WebRefusal) -> MonthGrid {
        guard let text else {
            let now = PlanDates.civil(today)
            return MonthGrid(year: now.year, month: now.month)
        }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 7, parts.count == 2, text.utf8.enumerated().allSatisfy({ $0.offset == 4 || (0x30...0x39).contains($0.element) }),
              let year = Int(parts[0]), let month = Int(parts[1]), (1...9_999).contains(year), (1...12).contains(month)
        else { throw WebRefusal.plain(.badRequest, "month: '\(text.prefix(20))' is not a month like 2026-05") }
        return MonthGrid(year: year, month: month)
    }

    var label: String { Self.monthNames[month - 1] + " \(year)" }
    static func text(_ year: Int, _ month: Int) -> String { String(format: "%04d-%02d", year, month) }
    var previous: String? { month == 1 ? (year > 1 ? Self.text(year - 1, 12) : nil) : Self.text(year, month - 1) }
    var next: String? { month == 12 ? (year < 9_999 ? Self.text(year + 1, 1) : nil) : Self.text(year, month + 1) }

    /// The grid's weeks, each day's values from `values` with its number, date and classes
    /// ("out" outside the month, "today").
    func weeks(today: Int, _ values: (Int) -> [String: Any]) -> [[String: Any]] {
        stride(from: gridStart, through: gridEnd, by: 7).map { weekStart in
            ["days": (weekStart..<weekStart + 7).map { day -> [String: Any] in
                var classes: [String] = []
                if day < first || day > last { classes.append("out") }
                if day == today { classes.append("today") }
                var cell = values(day)
                cell.merge(["day": String(PlanDates.civil(day).day), "iso": PlanDates.text(day), "class": classes.joined(separator: " "),
                            "today": day == today]) { $1 }
                return cell
            }]
        }
    }
}

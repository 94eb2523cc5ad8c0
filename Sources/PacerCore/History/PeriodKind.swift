/// The calendar periods totals and goals are kept for.
///
/// Weeks are ISO 8601 weeks: they start on Monday and are numbered within the ISO week-numbering
/// year (week 1 is the week with the year's first Thursday). That is the international standard and
/// the usual week of running logs; a Sunday-start week would need a different numbering too.
public enum PeriodKind: String, Sendable, Hashable, CaseIterable {
    case week
    case month
    case year
}

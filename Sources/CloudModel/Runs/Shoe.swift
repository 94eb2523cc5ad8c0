import Foundation

/// A pair of the runner's shoes: its distance is what it had when added plus the believed runs
/// run in it; past `remindM` the pages say it is time to replace it.
public struct Shoe: Sendable, Equatable {
    public var id: String
    public var accountID: String
    public var name: String
    public var startM: Double
    public var remindM: Double?
    public var retired: Bool
    public var createdMs: Int64
    /// `startM` and the runs' distance, as read.
    public var distanceM: Double

    public init(id: String, accountID: String, name: String, startM: Double, remindM: Double?, retired: Bool, createdMs: Int64,
                distanceM: Double? = nil) {
        self.id = id
        self.accountID = accountID
        self.name = name
        self.startM = startM
        self.remindM = remindM
        self.retired = retired
        self.createdMs = createdMs
        self.distanceM = distanceM ?? startM
    }

    /// Shoes one account keeps at most.
    public static let maxPerAccount = 50
    /// The largest distance a field takes, in km.
    public static let maxKm = 20_000.0

    /// Time to replace it: in use and past its reminder.
    public var isDue: Bool { !retired && remindM.map { distanceM >= $0 } == true }

    /// The name to store, or why not (one line of visible text, as a display name).
    public static func validatedName(_ text: String) -> Result<String, AccountInputError> {
        let name = text.trimmingSpaces.precomposedStringWithCanonicalMapping
        guard !name.isEmpty, name.count <= 64, !name.contains(where: \.isNewline), !name.unicodeScalars.contains(where: EmailAddress.isInvisible) else {
            return .failure(AccountInputError(field: "name", "name: 1 to 64 characters on one line, like \"Blue trainers\""))
        }
        return .success(name)
    }

    /// A distance typed in km ("812", "812.5", "812,5"; empty: nil when `optional`), in metres,
    /// or why not, naming the field in the runner's words.
    /// A distance typed in `unit` (the account's), in metres.
    public static func validatedKm(_ text: String, field: String, label: String, optional: Bool, unit: DistanceUnit = .km) -> Result<Double?, AccountInputError> {
        let trimmed = text.trimmingSpaces.replacingOccurrences(of: ",", with: ".")
        if trimmed.isEmpty { return optional ? .success(nil) : .success(0) }
        // Digits and one point only: Double() alone takes "1e3", "nan" and "+5".
        guard trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), trimmed.filter({ $0 == "." }).count <= 1,
              let km = Double(trimmed), km.isFinite, km >= 0, km <= maxKm, !(optional && km == 0) else {
            return .failure(AccountInputError(field: field, "\(field): a number of \(unit.symbol) from \(optional ? "1" : "0") to \(Int(maxKm)), like 650"))
        }
        return .success(km * unit.metres)
    }
}

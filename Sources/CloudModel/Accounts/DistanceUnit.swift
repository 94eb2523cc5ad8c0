/// Kilometres or miles: how an account's pages, e-mails, forms and device write distances and
/// paces. Stored values stay in metres and seconds per kilometre; only what people read and
/// type is in the account's unit.
public enum DistanceUnit: String, Sendable, Equatable, CaseIterable {
    case km, mi

    public static let metresPerMile = 1_609.344

    /// Metres in one of this unit.
    public var metres: Double { self == .km ? 1_000 : Self.metresPerMile }
    /// "km", "mi".
    public var symbol: String { rawValue }
    /// "/km", "/mi".
    public var paceSuffix: String { "/" + rawValue }
    /// For the settings' list.
    public var name: String { self == .km ? "Kilometres" : "Miles" }

    /// Heights (elevation) go with the unit: metres with kilometres, feet with miles.
    public var heightSymbol: String { self == .km ? "m" : "ft" }
    public func height(metres: Double) -> Double { self == .km ? metres : metres / 0.3048 }

    /// `metres` in this unit.
    public func amount(metres: Double) -> Double { metres / self.metres }
    /// A pace stored per kilometre, per this unit.
    public func pace(secondsPerKm: Double) -> Double { secondsPerKm * self.metres / 1_000 }
    /// A pace typed per this unit, per kilometre (as stored).
    public func secondsPerKm(pace: Double) -> Double { pace * 1_000 / self.metres }
}

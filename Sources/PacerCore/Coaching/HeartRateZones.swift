/// The five heart-rate zones as fractions of the maximum heart rate (50-60-70-80-90-100 %), the
/// convention Garmin and most coaching plans use.
public struct HeartRateZones: Sendable, Equatable {
    public var maxHeartRate: Int

    public init(maxHeartRate: Int) {
        self.maxHeartRate = maxHeartRate
    }

    static let lowerFractions = [0.5, 0.6, 0.7, 0.8, 0.9]

    /// The bpm range of zone 1–5 (lower bound inclusive, upper bound exclusive but for zone 5).
    public func range(ofZone zone: Int) -> ClosedRange<Int> {
        let z = min(max(zone, 1), 5)
        let low = Int((Double(maxHeartRate) * Self.lowerFractions[z - 1]).rounded())
        let high = z == 5 ? maxHeartRate : Int((Double(maxHeartRate) * Self.lowerFractions[z]).rounded()) - 1
        return low...high
    }

    /// The zone of `bpm`: 0 below zone 1, 5 at or above 90 %.
    public func zone(of bpm: Int) -> Int {
        var zone = 0
        for z in 1...5 where bpm >= range(ofZone: z).lowerBound { zone = z }
        return zone
    }
}

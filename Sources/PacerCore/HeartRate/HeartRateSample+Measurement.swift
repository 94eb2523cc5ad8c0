extension HeartRateMeasurement {
    /// The reading on the run's timeline. A strap that reports no skin contact gives a sample with
    /// `contact == false`, which `isValid` excludes: it describes the sensor, not the heart.
    public func sample(at time: Timestamp) -> HeartRateSample {
        HeartRateSample(time: time, bpm: bpm, rrIntervalsMs: rrIntervalsMs, contact: contact.isDetected)
    }
}

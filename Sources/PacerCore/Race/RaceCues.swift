extension RaceEvent {
    /// What the runner hears of this event: the cue points, off course and back, the result.
    /// Progress, the start and stages are for the map and the leaderboard, not the ear.
    public func cue(_ phrases: SpokenPhrases) -> Cue? {
        switch self {
        case .toGo(let meters, let time): Cue(time: time, kind: .raceToGo, text: phrases.toGo(meters))
        case .offCourse(let time, let meters): Cue(time: time, kind: .offCourse, text: phrases.offCourse(meters))
        case .backOnCourse(let time): Cue(time: time, kind: .backOnCourse, text: phrases.backOnCourse)
        case .finished(let result):
            Cue(time: result.finishTime, kind: .raceFinish,
                text: phrases.finished(gunSeconds: result.gunSeconds, netSeconds: result.netSeconds))
        case .started, .progress, .stage: nil
        }
    }
}

extension Cue {
    /// The place the cloud sent, to be said at `time` ("You are 12th of 250.").
    public static func racePlace(_ place: Int, of runners: Int?, at time: Timestamp, phrases: SpokenPhrases) -> Cue {
        Cue(time: time, kind: .racePlace, text: phrases.place(place, of: runners))
    }
}

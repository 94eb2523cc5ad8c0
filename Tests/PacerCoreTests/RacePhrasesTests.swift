import Testing
@testable import PacerCore

/// What a runner hears in a race, in kilometres and miles.
@Suite(.timeLimit(.minutes(10))) struct RacePhrasesTests {
    let metric = SpokenPhrases(units: .metric)
    let imperial = SpokenPhrases(units: .imperial)

    @Test func distanceToGo() {
        #expect(metric.toGo(5000) == "5 kilometres to go.")
        #expect(metric.toGo(1000) == "1 kilometre to go.")
        #expect(metric.toGo(500) == "500 metres to go.")
        #expect(imperial.toGo(3 * 1609.344) == "3 miles to go.")
        #expect(imperial.toGo(1609.344) == "1 mile to go.")
        #expect(imperial.toGo(1609.344 / 2) == "Half a mile to go.")
    }

    @Test func offCourseAndBack() {
        #expect(metric.offCourse(63) == "Off course: 60 metres from the route.")
        #expect(imperial.offCourse(63) == "Off course: 70 yards from the route.")
        #expect(metric.backOnCourse == "Back on course.")
    }

    @Test func finishWithGunAndNetTime() {
        #expect(metric.finished(gunSeconds: 2530.4, netSeconds: 2518.6)
            == "Finished. Gun time 42 minutes 10 seconds, net time 41 minutes 59 seconds.")
        #expect(metric.finished(gunSeconds: 13_448, netSeconds: 13_440)
            == "Finished. Gun time 3 hours 44 minutes 8 seconds, net time 3 hours 44 minutes.")
        #expect(metric.finished(gunSeconds: nil, netSeconds: 3605) == "Finished in 1 hour 5 seconds.")
        #expect(metric.raceTime(0.2) == "0 seconds")
    }

    @Test(arguments: [
        (1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"), (13, "13th"),
        (21, "21st"), (22, "22nd"), (101, "101st"), (111, "111th"), (112, "112th"), (1003, "1003rd"),
    ])
    func ordinals(_ n: Int, _ expected: String) {
        #expect(metric.ordinal(n) == expected)
    }

    @Test func place() {
        #expect(metric.place(12) == "You are 12th.")
        #expect(metric.place(3, of: 250) == "You are 3rd of 250.")
        let cue = Cue.racePlace(1, of: nil, at: RaceScenario.t0, phrases: metric)
        #expect(cue.kind == .racePlace && cue.text == "You are 1st." && cue.priority == .summary)
    }

    @Test func whatTheRunnerHearsOfTheEvents() {
        let t = RaceScenario.t0
        let result = RaceResult(finishTime: t.adding(seconds: 2530), startTime: t.adding(seconds: 12), gunTime: t)
        #expect(RaceEvent.finished(result).cue(metric)
            == Cue(time: t.adding(seconds: 2530), kind: .raceFinish, text: "Finished. Gun time 42 minutes 10 seconds, net time 41 minutes 58 seconds."))
        #expect(RaceEvent.toGo(meters: 2000, at: t).cue(metric) == Cue(time: t, kind: .raceToGo, text: "2 kilometres to go."))
        #expect(RaceEvent.offCourse(at: t, meters: 55).cue(metric)?.kind == .offCourse)
        #expect(RaceEvent.offCourse(at: t, meters: 55).cue(metric)?.priority == .safety)
        #expect(RaceEvent.backOnCourse(at: t).cue(metric)?.text == "Back on course.")
        #expect(RaceEvent.started(at: t).cue(metric) == nil)
        #expect(RaceEvent.progress(RaceProgress(time: t, meters: 1, toGo: 2, fromCourse: 0)).cue(metric) == nil)
    }
}

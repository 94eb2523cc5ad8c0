import PacerContract
import PacerCore
import Testing

/// Plan steps (the sync channel's `plan`) against the core's `Workout`: what the web form sends
/// is exactly what a workout file could say, and every refusal names the field.
@Suite(.timeLimit(.minutes(10))) struct PlanStepsTests {
    static let track = Workout(name: "6 by 400 metres", items: [
        .step(WorkoutStep(kind: .warmup, end: .distance(meters: 800), target: .pace(fastest: 300, slowest: 360))),
        .repeated(times: 6, steps: [
            WorkoutStep(kind: .run, end: .distance(meters: 400), target: .pace(fastest: 190, slowest: 210)),
            WorkoutStep(kind: .recover, end: .time(seconds: 90)),
        ]),
        .step(WorkoutStep(kind: .cooldown, end: .lapButton, target: .heartRateZone(2))),
        .step(WorkoutStep(kind: .rest, end: .time(seconds: 60), target: .heartRate(low: 100, high: 120))),
    ])

    @Test("a workout survives the trip to plan steps and back, repeats included")
    func roundTrip() throws {
        let steps = PlanSteps.steps(of: Self.track)
        #expect(steps.count == 4)
        #expect(steps[1] == PlanStep(type: "repeat", times: 6, steps: [PlanStep(type: "run", distance_m: 400, pace_s_per_km: [190, 210]),
                                                                    PlanStep(type: "recover", time_s: 90)]))
        #expect(try PlanSteps.workout(name: Self.track.name, steps: steps) == Self.track)
        #expect(try PlanSteps.workout(name: Self.track.name, steps: steps).plan.count == 1 + 12 + 2)
    }

    @Test("each broken step is refused with its field's path", arguments: [
        ([PlanStep](), "steps"),
        ([PlanStep(type: "jog", distance_m: 400)], "steps[0].type"),
        ([PlanStep(type: "run")], "steps[0]"),
        ([PlanStep(type: "run", distance_m: 400, time_s: 60)], "steps[0].time_s"),
        ([PlanStep(type: "run", distance_m: 5)], "steps[0].distance_m"),
        ([PlanStep(type: "run", time_s: 90_000)], "steps[0].time_s"),
        ([PlanStep(type: "run", lap: false)], "steps[0].lap"),
        ([PlanStep(type: "run", distance_m: 400, pace_s_per_km: [210, 190])], "steps[0].pace_s_per_km"),
        ([PlanStep(type: "run", distance_m: 400, pace_s_per_km: [190])], "steps[0].pace_s_per_km"),
        ([PlanStep(type: "run", distance_m: 400, hr_zone: 6)], "steps[0].hr_zone"),
        ([PlanStep(type: "run", distance_m: 400, hr_zone: 2, hr_bpm: [120, 140])], "steps[0].hr_bpm"),
        ([PlanStep(type: "run", distance_m: 400, hr_bpm: [140, 120])], "steps[0].hr_bpm"),
        ([PlanStep(type: "run", distance_m: 400, times: 2)], "steps[0].times"),
        ([PlanStep(type: "repeat", steps: [PlanStep(type: "run", lap: true)])], "steps[0].times"),
        ([PlanStep(type: "repeat", times: 101, steps: [PlanStep(type: "run", lap: true)])], "steps[0].times"),
        ([PlanStep(type: "repeat", times: 2)], "steps[0].steps"),
        ([PlanStep(type: "repeat", distance_m: 400, times: 2, steps: [PlanStep(type: "run", lap: true)])], "steps[0]"),
        ([PlanStep(type: "repeat", times: 2, steps: [PlanStep(type: "repeat", times: 2, steps: [PlanStep(type: "run", lap: true)])])],
         "steps[0].steps[0].type"),
        ([PlanStep(type: "run", lap: true), PlanStep(type: "repeat", times: 2, steps: [PlanStep(type: "run", distance_m: 1)])],
         "steps[1].steps[0].distance_m"),
        (Array(repeating: PlanStep(type: "run", lap: true), count: 51), "steps"),
    ])
    func refusals(steps: [PlanStep], field: String) {
        #expect(throws: PlanStepError.self) { try PlanSteps.workout(name: "x", steps: steps) }
        do {
            _ = try PlanSteps.workout(name: "x", steps: steps)
        } catch {
            #expect(error.field == field, "\(error)")
        }
    }
}

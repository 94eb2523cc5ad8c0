import Foundation
import PacerCore
import Testing
@testable import PacerConfig

/// The workout file writer (planned sessions become workout files): what it writes, the parser
/// reads back equal; what a file cannot say exactly is refused, naming the step.
@Suite(.timeLimit(.minutes(10))) struct WorkoutFileWriterTests {
    static func roundTrip(_ workout: Workout) throws -> Workout {
        try WorkoutFile.parse(try WorkoutFile.text(of: workout, header: ["a header line"]), file: "written.toml")
    }

    @Test func theExampleWorkoutsComeBackEqual() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: workoutsDirectory).filter { $0.hasSuffix(".toml") }
        #expect(names.count >= 3)
        for name in names {
            let workout = try WorkoutFile.load(path: workoutsDirectory + "/" + name)
            #expect(try Self.roundTrip(workout) == workout, "\(name)")
        }
    }

    @Test func everyEndTargetAndRepeatComesBackEqual() throws {
        let workout = Workout(name: "All \"kinds\" \\ of\tsteps", items: [
            .step(WorkoutStep(kind: .warmup, end: .time(seconds: 612.5), target: .heartRateZone(1))),
            .repeated(times: 3, steps: [
                WorkoutStep(kind: .run, end: .distance(meters: 412.75), target: .pace(fastest: 190, slowest: 211)),
                WorkoutStep(kind: .recover, end: .lapButton, target: .heartRate(low: 100, high: 130)),
            ]),
            .step(WorkoutStep(kind: .rest, end: .time(seconds: 5))),
            .step(WorkoutStep(kind: .cooldown, end: .distance(meters: 100_000), target: nil)),
        ])
        #expect(try Self.roundTrip(workout) == workout)
        let text = try WorkoutFile.text(of: workout, header: ["Planned session x"])
        #expect(text.hasPrefix("# Planned session x\nname = \"All \\\"kinds\\\" \\\\ of\\tsteps\"\n"), "\(text)")
        #expect(text.contains("type = \"repeat\"\ntimes = 3\nsteps = 2\n"))
        #expect(text.contains("pace = \"3:10-3:31\""))
    }

    @Test func aPaceOfAFractionOfASecondIsRefusedNamingItsStep() {
        let workout = Workout(name: "Odd pace", items: [
            .step(WorkoutStep(kind: .warmup, end: .distance(meters: 800))),
            .repeated(times: 2, steps: [WorkoutStep(kind: .run, end: .distance(meters: 400), target: .pace(fastest: 190.5, slowest: 210))]),
        ])
        #expect(throws: WorkoutWriteError(field: "step[3].pace", problem: "190.5 s per km is not a whole number of seconds, which a workout file (M:SS) cannot hold")) {
            try WorkoutFile.text(of: workout)
        }
    }
}

import Foundation
import PacerContract

/// When a run that names a planned session counts as having done it: it covered most of what was
/// planned, not merely started it. "Most" is `share` (80 %) of the planned distance (the steps
/// that end by distance, repeats counted) and of the planned time (the steps that end by time),
/// each against the whole run's distance and elapsed time. A run stopped 7:40 into a 10-minute
/// warm-up is 77 % of it: not done. Steps that end at the lap button have no size and ask for
/// nothing; a session made only of them is done by any run that names it.
public enum PlanCompletion {
    public static let share = 0.8

    /// The planned distance (m) and time (s) of `steps`.
    public static func planned(_ steps: [PlanStep]) -> (distanceM: Double, timeS: Double) {
        steps.reduce((0, 0)) { total, step in
            if step.type == "repeat" {
                let inner = planned(step.steps ?? [])
                let rounds = Double(max(0, step.times ?? 0))
                return (total.0 + inner.distanceM * rounds, total.1 + inner.timeS * rounds)
            }
            return (total.0 + (step.distance_m ?? 0), total.1 + (step.time_s ?? 0))
        }
    }

    /// Whether a run of `distanceM` over `elapsedS` followed most of `steps`.
    public static func isDone(_ steps: [PlanStep], distanceM: Double, elapsedS: Double) -> Bool {
        let plan = planned(steps)
        return distanceM >= share * plan.distanceM && elapsedS >= share * plan.timeS
    }

    /// The same for a session's stored steps (the contract's JSON); steps that do not decode
    /// ask for nothing, as before this rule.
    public static func isDone(stepsJSON: String, distanceM: Double, elapsedS: Double) -> Bool {
        guard let steps = try? JSONDecoder().decode([PlanStep].self, from: Data(stepsJSON.utf8)) else { return true }
        return isDone(steps, distanceM: distanceM, elapsedS: elapsedS)
    }
}

/// What is wrong with one field of a workout as it crosses a format (the sync channel's plan
/// steps, a workout file being written): the field's path ("steps[1].hr_zone") and why.
public struct FieldProblem: Error, Equatable, Sendable, CustomStringConvertible {
    public var field: String
    public var problem: String

    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }

    public var description: String { "\(field): \(problem)" }
}

/// What an idempotent write did.
public enum PutResult: Sendable, Equatable {
    /// New: stored.
    case created
    /// Exactly what was already stored: nothing changed.
    case unchanged
    /// Something different was already stored under that key: nothing changed.
    case conflict
    /// A different version replaced the stored one (run summaries only).
    case replaced
}

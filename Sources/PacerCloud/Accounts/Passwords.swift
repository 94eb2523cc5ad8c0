import Dispatch
import HummingbirdBcrypt

/// bcrypt hashing and checking, off the caller's executor: one hash takes a quarter of a second
/// at the default cost, which must not hold up the server's other requests.
public enum Passwords {
    /// bcrypt's work factor (2^cost rounds). 12 is ~250 ms on a server core; tests use the
    /// minimum (4) to stay fast, since they hash hundreds of times.
    public static let defaultCost: UInt8 = 12

    public static func hash(_ password: String, cost: UInt8 = defaultCost) async -> String {
        await offExecutor { Bcrypt.hash(password, cost: cost) }
    }

    public static func verify(_ password: String, hash: String) async -> Bool {
        await offExecutor { Bcrypt.verify(password, hash: hash) }
    }

    /// Spends what checking `password` against a hash of `cost` would, for an address with no
    /// account: a wrong address takes as long to refuse as a wrong password (no enumeration).
    static func waste(_ password: String, cost: UInt8) async {
        _ = await offExecutor { Bcrypt.hash(password, cost: cost) }
    }

    private static func offExecutor<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}

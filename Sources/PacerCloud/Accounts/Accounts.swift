import CloudModel
import CloudStore
import Foundation
import PacerContract
import Threads

/// Creating accounts and checking passwords: the same rules for the admin CLI and the sign-up
/// page, so neither can make an account the other would refuse.
public enum Accounts {
    /// Checks every field, hashes the password and stores the account. Throws
    /// `AccountInputError` naming the first bad field, or `StoreError` when the address is taken.
    public static func create(store: CloudStore, email: String, password: String, displayName: String?, timezone: String = "UTC",
                              confirmed: Bool = false, cost: UInt8 = Passwords.defaultCost) async throws -> Account {
        let address = try EmailAddress.normalized(email).get()
        if let problem = PasswordPolicy.problem(with: password) { throw problem }
        let name = try DisplayName.validated(displayName ?? String(address.prefix(while: { $0 != "@" }))).get()
        guard timezone.utf8.count <= 64, TimeZone(identifier: timezone) != nil else {
            throw AccountInputError(field: "timezone", "timezone '\(timezone.prefix(64))' is not a time zone name like Europe/Rome or UTC")
        }
        let account = Account(id: UUID().uuidString.lowercased(), email: address, confirmed: confirmed, displayName: name, timezone: timezone,
                              createdAt: WireTime.text(milliseconds: WallClock.milliseconds()))
        try await store.accounts.addAccount(account, passwordHash: await Passwords.hash(password, cost: cost))
        return account
    }

    /// The account when `password` is its password; nil otherwise, after as long as a check takes
    /// (whether or not the address has an account).
    public static func authenticate(store: CloudStore, email: String, password: String,
                                    cost: UInt8 = Passwords.defaultCost) async throws -> Account? {
        // bcrypt reads a C string: "secret\0anything" would pass for "secret". No stored
        // password has a NUL (`PasswordPolicy`), so none may match one.
        guard case .success(let address) = EmailAddress.normalized(email), !password.contains("\0"),
              let stored = try await store.accounts.account(email: address) else {
            await Passwords.waste(password, cost: cost)
            return nil
        }
        return await Passwords.verify(password, hash: stored.passwordHash) ? stored.account : nil
    }
}

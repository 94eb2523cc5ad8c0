/// What a new password must be (OWASP ASVS 2.1): long enough, not longer than bcrypt reads, and
/// not one of the passwords every guesser tries first. No composition rules: they make
/// passwords harder to remember, not to guess.
public enum PasswordPolicy {
    /// ASVS 2.1.1 asks for at least 12 characters.
    public static let minimumCharacters = 12
    /// bcrypt reads 72 bytes and ignores the rest: a longer password would only seem stronger.
    public static let maximumBytes = 72

    /// The most common passwords of 12 or more characters (shorter ones fail the length check
    /// anyway), lower-cased: from the published breach top lists.
    static let common: Set<String> = [
        "123456789012", "1234567890123", "12345678901234", "123456789123", "qwertyuiop12", "qwertyuiopasdfgh",
        "password1234", "password12345", "password123!", "passwordpassword", "iloveyou1234", "qwerty123456",
        "1q2w3e4r5t6y", "1qaz2wsx3edc", "qazwsxedcrfv", "zaq12wsxcde3", "abcdefghijkl", "abcd12345678",
        "111111111111", "000000000000", "aaaaaaaaaaaa", "letmein12345", "welcome12345", "administrator",
        "football1234", "baseball1234", "sunshine1234", "princess1234", "trustno1trustno1", "changeme1234",
        "correcthorsebatterystaple", "asdfghjkl123", "asdfghjklasdf", "monkey123456", "dragon123456",
    ]

    /// nil when `password` may be used; otherwise why not, naming the field.
    public static func problem(with password: String, field: String = "password") -> AccountInputError? {
        if password.count < minimumCharacters {
            return AccountInputError(field: field, "\(field) is shorter than \(minimumCharacters) characters")
        }
        if password.utf8.count > maximumBytes {
            return AccountInputError(field: field, "\(field) is longer than \(maximumBytes) bytes (bcrypt ignores the rest)")
        }
        if password.contains("\0") {
            return AccountInputError(field: field, "\(field) contains a NUL character")
        }
        if common.contains(password.lowercased()) || Set(password).count <= 2 {
            return AccountInputError(field: field, "\(field) is one of the most common passwords: choose another")
        }
        return nil
    }
}

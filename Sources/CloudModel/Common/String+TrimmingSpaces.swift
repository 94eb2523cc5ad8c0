extension String {
    /// Without the spaces (U+0020 only) it starts and ends with: what addresses and tokens are compared by.
    public var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}

import CloudModel

/// The monitoring invitation e-mail. It goes out from the operator's address to an address the
/// runner typed, so what the runner chose goes in only as plain text: the subject is fixed (no
/// name in it: a subject is what a phishing mail is judged by), and the body quotes the name
/// with its links defanged and invisible characters dropped (`DisplayName.plain`). The runner's
/// address, confirmed at sign-up, says who asks.
enum InvitationMail {
    static let subject = "An invitation to watch over a runner with Pacer"

    static func text(inviterName: String, inviterEmail: String, link: String, lifetimeDays: Int64) -> String {
        "A Pacer user who calls themselves \"\(DisplayName.plain(inviterName))\" (account address: \(DisplayName.defanged(inviterEmail))) "
            + "asks you to watch over them with Pacer: you would see where they are while they run and their alerts, "
            + "and could answer an alert.\n\nTo accept, open:\n\n\(link)\n\n"
            + "The link works once, for \(max(1, lifetimeDays)) days. If you do not know this person, ignore this e-mail."
    }
}

import Foundation
import HummingbirdTesting
@testable import PacerCloud
import PacerTestSupport
import Testing

/// The e-mail attacks of issue 19 through tools/smtp-sink (a real SMTP server): one message,
/// its one recipient, no command but the client's own.
@Suite("pacer-cloud: no SMTP or header injection", .timeLimit(.minutes(10)))
struct MailInjectionTests {
    static let attack = "SOS\r\r\n.\r\nMAIL FROM:<attacker@example.net>\r\nRCPT TO:<victim@example.net>\r\nDATA\r\nspam\n.\nQUIT"

    @Test("an sms with \\r\\r\\n.\\r\\nMAIL FROM is one message's text; a kind with a Bcc is refused", arguments: Backend.allCases)
    func smsAndKind(backend: Backend) async throws {
        let smtp = try await offPool { try SMTPSink() }
        defer { smtp.stop() }
        let configuration = CloudConfiguration(
            publicURL: "https://cloud.example.org", mail: MailSettings(host: "127.0.0.1", port: Int(smtp.port), from: "sos@example.org"),
            outboxPoll: .milliseconds(200))
        try await Cloud.with(backend, configuration: configuration) { cloud in
            let token = try await cloud.addDevice("pacer-7", email: "relative@example.org")
            let bcc = try await cloud.json(.post, "/v1/alerts", token: token,
                                           AlertTests.message(Track.runID(), 0, kind: "hr_high\r\nBcc: attacker@example.net"))
            #expect(bcc.status == .badRequest)
            #expect(bcc.errorMessage.contains("'kind'"))

            var body = AlertTests.message(Track.runID(), 0)
            body["sms"] = Self.attack
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, body).status == .created)
            let mails = try await offPool { smtp.waitForMessages(count: 1, timeout: .seconds(15)) }
            try await Task.sleep(for: .milliseconds(500))
            #expect(smtp.messages().count == 1)
            let mail = try #require(mails.first)
            #expect(mail.recipients == ["relative@example.org"])
            #expect(mail.mailFrom == "sos@example.org")
            #expect(mail.data.contains("\r\nMAIL FROM:<attacker@example.net>\r\n"))  // text in the message, not a command
            #expect(smtp.commands().filter { $0.uppercased().hasPrefix("MAIL FROM") } == ["MAIL FROM:<sos@example.org>"])
            #expect(smtp.commands().filter { $0.uppercased().hasPrefix("RCPT TO") } == ["RCPT TO:<relative@example.org>"])
            #expect(!smtp.commands().contains { $0.contains("example.net") })
        }
    }

    @Test("header values with CR or LF are refused before anything is sent; non-ASCII is RFC 2047")
    func headers() async throws {
        let smtp = try await offPool { try SMTPSink() }
        defer { smtp.stop() }
        let client = SMTPClient(host: "127.0.0.1", port: Int(smtp.port))
        for subject in ["SOS hr_high\r\nBcc: attacker@example.net", "SOS\nBcc: a@example.net", "SOS\rBcc: a@example.net"] {
            await #expect(throws: SMTPClient.Failure.self) {
                try await client.send(from: "sos@example.org", to: "relative@example.org", subject: subject, text: "x")
            }
        }
        await #expect(throws: SMTPClient.Failure.self) {
            try await client.send(from: "sos@example.org", to: "relative@example.org\r\nRCPT TO:<a@example.net>", subject: "SOS", text: "x")
        }
        #expect(smtp.commands().isEmpty)

        let subject = "SOS (Läufer-ü): " + String(repeating: "hohe Herzfrequenz ♥ ", count: 6)
        try await client.send(from: "sos@example.org", to: "relative@example.org", subject: subject, text: ".\n..\r\r\n.")
        let mail = try #require(try await offPool { smtp.waitForMessages(count: 1) }.first)
        let header = try #require(mail.data.components(separatedBy: "\r\n\r\n").first)
        let subjectLines = header.components(separatedBy: "\r\n").drop { !$0.hasPrefix("Subject: ") }.prefix { !$0.hasPrefix("Date: ") }
        #expect(subjectLines.count > 1)  // folded
        var decoded = ""
        for line in subjectLines {
            let word = line.hasPrefix("Subject: ") ? String(line.dropFirst("Subject: ".count)) : String(line.dropFirst())
            #expect(line == subjectLines.first || line.hasPrefix(" "))
            #expect(word.count <= 75)
            #expect(word.hasPrefix("=?utf-8?B?") && word.hasSuffix("?="))
            let base64 = String(word.dropFirst(10).dropLast(2))
            decoded += String(decoding: try #require(Data(base64Encoded: base64)), as: UTF8.self)
        }
        #expect(decoded == subject)
        // Dot-stuffing undone by the sink gives the lines back, each line break a CRLF.
        #expect(mail.data.hasSuffix("\r\n\r\n.\r\n..\r\n\r\n."))
    }

    @Test("dot-stuffing works on bytes: \\r\\r\\n and a lone \\n cannot end the message")
    func dotStuffing() {
        #expect(SMTPClient.dotStuffed(Array("a\r\r\n.\r\nMAIL".utf8)) == Array("a\r\n\r\n..\r\nMAIL".utf8))
        #expect(SMTPClient.dotStuffed(Array("a\n.\nb".utf8)) == Array("a\r\n..\r\nb".utf8))
        #expect(SMTPClient.dotStuffed(Array(".x".utf8)) == Array("..x".utf8))
        #expect(SMTPClient.dotStuffed(Array("a.b\r.".utf8)) == Array("a.b\r\n..".utf8))
    }
}

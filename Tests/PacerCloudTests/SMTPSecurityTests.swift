import Foundation
@testable import PacerCloud
import PacerTestSupport
import Testing

/// STARTTLS and AUTH against tools/smtp-sink with a throwaway CA: the password and the message
/// cross only over TLS to a certificate that verifies, and each refusal says what went wrong.
@Suite("pacer-cloud: SMTP with STARTTLS and AUTH", .timeLimit(.minutes(10)))
struct SMTPSecurityTests {
    static let credentials = MailSettings.Credentials(username: "pacer", password: "correct horse battery")

    static func send(_ client: SMTPClient) async throws {
        try await client.send(from: "sos@example.org", to: "relative@example.org", subject: "SOS (pacer-7)", text: "help")
    }

    @Test("STARTTLS, then AUTH (PLAIN, or LOGIN when only that is offered), then the message, all over TLS",
          arguments: [["PLAIN", "LOGIN"], ["LOGIN"]])
    func delivered(methods: [String]) async throws {
        let sink = try await offPool { try SMTPSink(starttls: true, credentials: ("pacer", "correct horse battery"), authMethods: methods) }
        defer { sink.stop() }
        let ca = try #require(sink.certificates?.caFile)
        try await Self.send(SMTPClient(host: "127.0.0.1", port: Int(sink.port), security: .starttls, credentials: Self.credentials, trustRoots: ca))
        let mail = try #require(try await offPool { sink.waitForMessages(count: 1) }.first)
        #expect(mail.recipients == ["relative@example.org"])
        #expect(sink.authentications().map { "\($0.user) \($0.ok) \($0.tls)" } == ["pacer true true"])
        let commands = sink.commandsWithTLS()
        // Only EHLO and STARTTLS in plain text; the password's base64 never without TLS.
        #expect(commands.filter { !$0.tls }.map(\.command) == ["EHLO pacer-cloud", "STARTTLS"])
        #expect(commands.contains { $0.command.hasPrefix("AUTH " + methods[0]) && $0.tls })
        #expect(commands.contains { $0.command.hasPrefix("MAIL FROM:") && $0.tls })
    }

    @Test("STARTTLS without AUTH works too")
    func starttlsOnly() async throws {
        let sink = try await offPool { try SMTPSink(starttls: true) }
        defer { sink.stop() }
        try await Self.send(SMTPClient(host: "127.0.0.1", port: Int(sink.port), security: .starttls, trustRoots: sink.certificates?.caFile))
        #expect(try await offPool { sink.waitForMessages(count: 1) }.count == 1)
        #expect(sink.commandsWithTLS().filter { !$0.tls }.map(\.command) == ["EHLO pacer-cloud", "STARTTLS"])
    }

    @Test("a server that does not offer STARTTLS gets neither the password nor the message")
    func noStarttlsNoPassword() async throws {
        let sink = try await offPool { try SMTPSink(credentials: ("pacer", "correct horse battery")) }
        defer { sink.stop() }
        let client = SMTPClient(host: "127.0.0.1", port: Int(sink.port), security: .starttls, credentials: Self.credentials)
        let failure = await #expect(throws: SMTPClient.Failure.self) { try await Self.send(client) }
        #expect(failure?.description.contains("does not offer STARTTLS; refusing to send in plain text") == true)
        #expect(sink.commands() == ["EHLO pacer-cloud"])
        #expect(sink.authentications().isEmpty)
        #expect(sink.messages().isEmpty)
    }

    @Test("credentials without STARTTLS are refused before connecting")
    func plainWithPasswordRefused() async throws {
        let sink = try await offPool { try SMTPSink(credentials: ("pacer", "correct horse battery")) }
        defer { sink.stop() }
        let client = SMTPClient(host: "127.0.0.1", port: Int(sink.port), security: .plain, credentials: Self.credentials)
        let failure = await #expect(throws: SMTPClient.Failure.self) { try await Self.send(client) }
        #expect(failure?.description.contains("refusing to send the SMTP password") == true)
        #expect(sink.commands().isEmpty)
    }

    @Test("a wrong password is a clear error that does not repeat the password")
    func wrongPassword() async throws {
        let sink = try await offPool { try SMTPSink(starttls: true, credentials: ("pacer", "correct horse battery")) }
        defer { sink.stop() }
        let client = SMTPClient(host: "127.0.0.1", port: Int(sink.port), security: .starttls,
                                credentials: .init(username: "pacer", password: "wrong horse"), trustRoots: sink.certificates?.caFile)
        let failure = await #expect(throws: SMTPClient.Failure.self) { try await Self.send(client) }
        let message = failure?.description ?? ""
        #expect(message.contains("refused the user name or password of 'pacer'"))
        #expect(message.contains("535"))
        #expect(!message.contains("wrong horse") && !message.contains(Data("wrong horse".utf8).base64EncodedString()))
        #expect(sink.authentications().map(\.ok) == [false])
        #expect(sink.messages().isEmpty)
        #expect(!sink.commands().contains { $0.hasPrefix("MAIL") })
    }

    @Test("a certificate from a CA the client does not trust ends it before AUTH")
    func untrustedCertificate() async throws {
        let sink = try await offPool { try SMTPSink(starttls: true, credentials: ("pacer", "correct horse battery")) }
        let other = try await offPool { try SMTPSink(starttls: true) }
        defer {
            sink.stop()
            other.stop()
        }
        let client = SMTPClient(host: "127.0.0.1", port: Int(sink.port), security: .starttls, credentials: Self.credentials,
                                trustRoots: other.certificates?.caFile)
        let failure = await #expect(throws: SMTPClient.Failure.self) { try await Self.send(client) }
        #expect(failure?.description.contains("127.0.0.1:\(sink.port)") == true)
        #expect(sink.commands() == ["EHLO pacer-cloud", "STARTTLS"])
        #expect(sink.authentications().isEmpty)
    }
}

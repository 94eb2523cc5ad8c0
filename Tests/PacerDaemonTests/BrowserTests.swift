import Foundation
import PacerTestSupport
import Testing

/// tools/browser-test: every web flow once, in headless Chromium, against the built
/// pacer-cloud (each flow with its own server and SQLite database). Screenshots land in
/// .build/browser/. Here because later flows drive pacerd and pacerctl too, built next to it.
/// The flows run in three groups side by side, a Chromium each: one after the other they took
/// 155 s alone and 283 s in the start burst, the whole burst's length.
@Suite(.timeLimit(.minutes(10))) struct BrowserTests {
    static let groups: [[String]] = [
        ["accounts", "first-run", "run-page", "heart-page", "run-manage", "race-live"],
        ["alert-page", "monitor-dashboard", "my-devices", "plan", "one-app"],
        ["harness-forms", "monitor-live-run", "run-page-no-tiles", "plan-device", "import-files", "units"],
    ]

    @Test("every browser flow passes in headless Chromium (each group of flows in its own)", arguments: groups)
    func flows(_ group: [String]) async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-browser-test")
        let binaries = URL(fileURLWithPath: DaemonFixture.binary("pacer-cloud")).deletingLastPathComponent().path
        let process = try ChildProcess(DaemonFixture.repositoryRoot + "/tools/browser-test",
                                       ["--bin-dir", binaries, "--workdir", directory.path] + group.flatMap { ["--flow", $0] },
                                       stdout: .file(directory.file("stdout")), stderr: .file(directory.file("stderr")))
        // SIGTERM first: the harness then stops the browser and its servers by PID itself.
        let status: ChildProcess.Status
        if let exited = await process.waitForExit(timeout: .seconds(480)) {
            status = exited
        } else {
            status = await process.terminate(grace: .seconds(15))
        }
        let output = (try? String(contentsOfFile: directory.file("stdout"), encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? ""
        // The summary (flows passed, seconds) in the test log, as the other suites' times are.
        print(output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(status == .exited(0), "\(status)\n\(errors.suffix(6000))")
        #expect(output.contains("\(group.count) of \(group.count) flows passed in "), "\(output)")
    }

    @Test("the groups hold every flow of tools/browser-test once")
    func everyFlowIsInAGroup() throws {
        let listed = try DaemonFixture.runBlocking(DaemonFixture.repositoryRoot + "/tools/browser-test", ["--list"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let flows = listed.stdout.split(separator: "\n").map(String.init)
        #expect(Self.groups.flatMap { $0 }.sorted() == flows.sorted(), "\(flows)")
    }
}

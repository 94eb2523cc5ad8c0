import Foundation
import PacerTestSupport
import Testing

/// tools/browser-test: every web flow once, in one headless Chromium, against the built
/// pacer-cloud (each flow with its own server and SQLite database). Screenshots land in
/// .build/browser/. Here because later flows drive pacerd and pacerctl too, built next to it.
@Suite(.timeLimit(.minutes(10))) struct BrowserTests {
    @Test("every browser flow passes in headless Chromium")
    func flows() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-browser-test")
        let binaries = URL(fileURLWithPath: DaemonFixture.binary("pacer-cloud")).deletingLastPathComponent().path
        let process = try ChildProcess(DaemonFixture.repositoryRoot + "/tools/browser-test",
                                       ["--bin-dir", binaries, "--workdir", directory.path],
                                       stdout: .file(directory.file("stdout")), stderr: .file(directory.file("stderr")))
        // SIGTERM first: the harness then stops the browser and its servers by PID itself.
        let status: ChildProcess.Status
        if let exited = await process.waitForExit(timeout: .seconds(300)) {
            status = exited
        } else {
            status = await process.terminate(grace: .seconds(15))
        }
        let output = (try? String(contentsOfFile: directory.file("stdout"), encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? ""
        // The summary (flows passed, seconds) in the test log, as the other suites' times are.
        print(output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(status == .exited(0), "\(status)\n\(errors.suffix(6000))")
        #expect(output.contains(" flows passed in "), "\(output)")
    }
}

import GPSD
import PacerTestSupport
import Testing

/// The client without a gpsd: failures reported clearly, stopping, and the cooperative pool.
@Suite(.timeLimit(.minutes(10)))
struct GPSDClientTests {
    @Test func stopBeforeStartFinishesTheStream() async {
        let client = GPSDClient(host: "127.0.0.1", port: 1)
        client.stop()
        var count = 0
        for await _ in client.events { count += 1 }
        #expect(count == 0)
        client.start()  // after a stop: nothing runs
        #expect(!client.isRunning)
    }

    @Test func unreachableGPSDIsReportedOnceWithTheReason() async throws {
        let port = try FreePort.tcp()  // nothing listens there
        let client = GPSDClient(configuration: .init(host: "127.0.0.1", port: Int(port), firstRetryDelay: .milliseconds(10), maximumRetryDelay: .milliseconds(20)))
        let log = EventLog(client)
        client.start()
        let reported = await log.wait(timeout: .seconds(5)) { !$0.disconnections.isEmpty }
        try await Task.sleep(for: .milliseconds(300))  // some 15 more attempts
        client.stop()
        #expect(await log.waitUntilFinished(timeout: .seconds(5)))
        #expect(reported)
        #expect(log.snapshot.disconnections.count == 1)
        let reason = log.snapshot.disconnections.first ?? ""
        #expect(reason.contains("127.0.0.1:\(port)"), "\(reason)")
        #expect(reason.contains("connect"), "\(reason)")
        #expect(client.statistics.connections == 0)
    }

    @Test(arguments: [("no-such-host.invalid", 2947), ("127.0.0.1", 0), ("127.0.0.1", 70000), ("", 2947)])
    func badEndpointsAreReportedNotFatal(host: String, port: Int) async {
        let client = GPSDClient(host: host, port: port)
        let log = EventLog(client)
        client.start()
        let reported = await log.wait(timeout: .seconds(10)) { !$0.disconnections.isEmpty }
        client.stop()
        #expect(await log.waitUntilFinished(timeout: .seconds(5)))
        #expect(reported)
        print("\(host):\(port) → \(log.snapshot.disconnections)")
    }

    /// Stopped while waiting to retry (backoff at its 1.5 s cap), the client ends at once.
    @Test func stopWhileRetryingEndsPromptly() async throws {
        let port = try FreePort.tcp()
        let client = GPSDClient(configuration: .init(host: "127.0.0.1", port: Int(port), firstRetryDelay: .seconds(30), maximumRetryDelay: .seconds(30)))
        let log = EventLog(client)
        client.start()
        #expect(await log.wait(timeout: .seconds(5)) { !$0.disconnections.isEmpty })
        let stopAt = ContinuousClock.now
        client.stop()
        // Well under the 30 s retry delay: the wait was woken, not waited out.
        #expect(await log.waitUntilFinished(timeout: .seconds(5)))
        #expect(!client.isRunning)
        print("stop while retrying: stream finished \(ContinuousClock.now - stopAt) after stop()")
    }

    /// Clients block in poll(2) on their own threads, never on the cooperative pool (2 threads
    /// here): with more clients waiting than the pool has threads, the test's own tasks still
    /// run to completion (a blocked pool would hang them until the time limit).
    @Test func clientsDoNotOccupyTheCooperativePool() async throws {
        let port = try FreePort.tcp()
        let clients = (0..<6).map { _ in
            GPSDClient(configuration: .init(host: "127.0.0.1", port: Int(port), firstRetryDelay: .seconds(30), maximumRetryDelay: .seconds(30)))
        }
        let logs = clients.map { EventLog($0) }
        for client in clients { client.start() }
        for log in logs { #expect(await log.wait(timeout: .seconds(5)) { !$0.disconnections.isEmpty }) }
        // Every client now sits in its 30 s retry wait.
        let completed = await withTaskGroup(of: Int.self) { group in
            for index in 0..<32 {
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(10))
                    await Task.yield()
                    return index
                }
            }
            return await group.reduce(0) { $0 + ($1 >= 0 ? 1 : 0) }
        }
        #expect(completed == 32)
        #expect(clients.allSatisfy { $0.isRunning })
        for client in clients { client.stop() }
        for log in logs { #expect(await log.waitUntilFinished(timeout: .seconds(5))) }
    }
}
